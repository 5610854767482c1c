package openapi

import (
	"encoding/base64"
	"mime"
	"net/url"
	"strings"
)

// File content in arguments. A request body or multipart part declared
// format: binary (listed as a string with contentEncoding: base64) takes
// the file's bytes as base64 (standard or URL-safe alphabet, padded or
// not, line breaks allowed) or as a data: URI (RFC 2397,
// https://www.rfc-editor.org/rfc/rfc2397), which clients increasingly
// send. A URL is refused: restmcp does not fetch files for the caller.

// fileContentHint says what a file argument takes, for error reasons.
const fileContentHint = "send the file's bytes base64-encoded, or as a data: URI (data:image/png;base64,…)"

// decodeFileContent reads a file argument's string: its bytes, and the
// media type a data: URI names ("" otherwise). The error is the reason for
// an ArgumentError.
func decodeFileContent(s string) ([]byte, string, string) {
	lower := strings.ToLower(strings.TrimSpace(s))
	for _, scheme := range []string{"http://", "https://", "file:", "ftp://"} {
		if strings.HasPrefix(lower, scheme) {
			return nil, "", "a URL is not file content: restmcp does not fetch files; " + fileContentHint
		}
	}
	if strings.HasPrefix(lower, "data:") {
		return decodeDataURI(strings.TrimSpace(s))
	}
	b, ok := decodeBase64(s)
	if !ok {
		return nil, "", "not valid base64: " + fileContentHint
	}
	return b, "", ""
}

// decodeDataURI reads data:[<media type>][;base64],<data>.
func decodeDataURI(s string) ([]byte, string, string) {
	meta, data, ok := strings.Cut(s[len("data:"):], ",")
	if !ok {
		return nil, "", "a data: URI needs a comma before its data: " + fileContentHint
	}
	isBase64 := false
	if m, found := strings.CutSuffix(meta, ";base64"); found {
		meta, isBase64 = m, true
	}
	mediaType := ""
	if meta != "" {
		mt, params, err := mime.ParseMediaType(meta)
		if err != nil {
			return nil, "", "the data: URI's media type " + meta + " does not parse: " + err.Error()
		}
		mediaType = mime.FormatMediaType(mt, params)
	}
	if isBase64 {
		b, ok := decodeBase64(data)
		if !ok {
			return nil, "", "the data: URI's data is not valid base64"
		}
		return b, mediaType, ""
	}
	b, err := url.PathUnescape(data)
	if err != nil {
		return nil, "", "the data: URI's data is not valid percent-encoding"
	}
	return []byte(b), mediaType, ""
}

// decodeBase64 decodes s in either alphabet, padded or not, ignoring line
// breaks and spaces.
func decodeBase64(s string) ([]byte, bool) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}
