package adapter

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// acceptEncoding is the Accept-Encoding restmcp sends upstream: only the
// content codings it decodes (R9; RFC 9110 §8.4.1:
// https://www.rfc-editor.org/rfc/rfc9110#section-8.4.1). Setting it
// turns off net/http's transparent gzip, so every coding is decoded here,
// the same way.
const acceptEncoding = "gzip, deflate, br, zstd"

// zstdMaxWindow bounds the memory one zstd stream may ask for (a crafted
// frame header can name a window of gigabytes).
const zstdMaxWindow = 32 << 20

// decodeContent replaces resp.Body by the body with its Content-Encoding
// undone, codings applied in reverse order of listing, and removes the
// Content-Encoding and Content-Length headers that described the encoded
// form. The decoded stream is read through the same size caps as any body
// (R5), so a small compressed body cannot expand without bound. known is
// false, and the body left as it is, when a coding is not one restmcp
// decodes: such a body is passed on as binary data (R4). An error means the
// decoder could not start (a corrupt header).
func decodeContent(resp *http.Response) (known bool, err error) {
	ce := strings.TrimSpace(resp.Header.Get("Content-Encoding"))
	if ce == "" {
		return true, nil
	}
	codings := strings.Split(ce, ",")
	for i := range codings {
		c := strings.ToLower(strings.TrimSpace(codings[i]))
		switch c {
		case "identity", "gzip", "x-gzip", "deflate", "br", "zstd":
		default:
			return false, nil
		}
		codings[i] = c
	}
	body := resp.Body
	for i := len(codings) - 1; i >= 0; i-- {
		r, err := decoder(codings[i], body)
		if err != nil {
			return true, fmt.Errorf("decoding %s response body: %w", codings[i], err)
		}
		body = r
	}
	resp.Body = body
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	return true, nil
}

// decoder returns a reader that undoes one content coding of rc; closing
// it closes rc.
func decoder(coding string, rc io.ReadCloser) (io.ReadCloser, error) {
	switch coding {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(rc)
		if err != nil {
			return nil, err
		}
		return readCloser{zr, rc}, nil
	case "deflate":
		// "deflate" means zlib-wrapped DEFLATE (RFC 9110 §8.4.1.2), but some
		// servers send raw DEFLATE: told apart by the zlib header.
		br := bufio.NewReader(rc)
		if h, err := br.Peek(2); err == nil && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, err
			}
			return readCloser{zr, rc}, nil
		}
		return readCloser{flate.NewReader(br), rc}, nil
	case "br":
		return readCloser{brotli.NewReader(rc), rc}, nil
	case "zstd":
		zr, err := zstd.NewReader(rc, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow))
		if err != nil {
			return nil, err
		}
		return zstdCloser{zr, rc}, nil
	}
	return rc, nil // identity
}

type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }

type zstdCloser struct {
	*zstd.Decoder
	c io.Closer
}

func (z zstdCloser) Close() error { z.Decoder.Close(); return z.c.Close() }
