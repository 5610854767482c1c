package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMultipartC16(t *testing.T) {
	type part struct {
		Disposition, ContentType string
		Content                  []byte
	}
	tests := []struct {
		dir, tool, args string
		want            []part
	}{
		{"C16-form-multipart", "upload_file", `{"file":"iVBORw0KGgo=","purpose":"avatar"}`, []part{
			{`form-data; name="file"; filename="file"`, "image/png", []byte{0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A}},
			{`form-data; name="purpose"`, "", []byte("avatar")},
		}},
		{"C21-swagger2", "upload_attachment", `{"orderId":"o1","file":"aGVsbG8=","note":"x"}`, []part{
			{`form-data; name="file"; filename="file"`, "application/octet-stream", []byte("hello")},
			{`form-data; name="note"`, "", []byte("x")},
		}},
		// A data: URI: its bytes, and its media type where the part
		// declares none; the part's declared type where it does.
		{"C21-swagger2", "upload_attachment", `{"orderId":"o1","file":"data:text/csv;base64,YSxiCjEsMgo=","note":"x"}`, []part{
			{`form-data; name="file"; filename="file"`, "text/csv", []byte("a,b\n1,2\n")},
			{`form-data; name="note"`, "", []byte("x")},
		}},
		{"C16-form-multipart", "upload_file", `{"file":"data:image/gif;base64,iVBORw0KGgo=","purpose":"avatar"}`, []part{
			{`form-data; name="file"; filename="file"`, "image/png", []byte{0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A}},
			{`form-data; name="purpose"`, "", []byte("avatar")},
		}},
		// Base64 without padding, in the URL-safe alphabet, over lines.
		{"C21-swagger2", "upload_attachment", `{"orderId":"o1","file":"_-_-\n_w","note":"x"}`, []part{
			{`form-data; name="file"; filename="file"`, "application/octet-stream", []byte{0xff, 0xef, 0xfe, 0xff}},
			{`form-data; name="note"`, "", []byte("x")},
		}},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%d_%s", i, tt.tool), func(t *testing.T) {
			d := loadCase(t, tt.dir, "", LoadOptions{Upstream: "http://upstream.test"})
			req, err := toolByName(t, d, tt.tool).NewRequest(context.Background(), json.RawMessage(tt.args), "")
			if err != nil {
				t.Fatal(err)
			}
			mt, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
			if err != nil || mt != "multipart/form-data" {
				t.Fatalf("Content-Type %q", req.Header.Get("Content-Type"))
			}
			r := multipart.NewReader(req.Body, params["boundary"])
			var got []part
			for {
				p, err := r.NextPart()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(p)
				got = append(got, part{p.Header.Get("Content-Disposition"), p.Header.Get("Content-Type"), b})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFileContentRefusals: a URL, bad base64 and a data: URI without its
// comma are refused, each naming what to send.
func TestFileContentRefusals(t *testing.T) {
	d := loadCase(t, "C21-swagger2", "", LoadOptions{Upstream: "http://upstream.test"})
	for _, c := range []struct{ file, want string }{
		{"https://example.com/report.pdf", "invalid arguments: file: a URL is not file content: restmcp does not fetch files; send the file's bytes base64-encoded, or as a data: URI (data:image/png;base64,…)"},
		{"not base64!", "invalid arguments: file: not valid base64: send the file's bytes base64-encoded, or as a data: URI (data:image/png;base64,…)"},
		{"data:text/plain;base64", "invalid arguments: file: a data: URI needs a comma before its data: send the file's bytes base64-encoded, or as a data: URI (data:image/png;base64,…)"},
		{"data:;base64,@@@", "invalid arguments: file: the data: URI's data is not valid base64"},
	} {
		args, _ := json.Marshal(map[string]string{"orderId": "o1", "file": c.file})
		_, err := toolByName(t, d, "upload_attachment").NewRequest(context.Background(), args, "")
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v\nwant %s", c.file, err, c.want)
		}
	}
}
