package openapi

import (
	"context"
	"encoding/json"
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
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
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
