package adapter

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/internal/clip"
	"github.com/restmcp/restmcp/openapi"
)

// Download links (Options.BinaryLinkBytes). A GET operation's binary
// answer larger than the bound is not inlined as base64: the result is a
// resource_link (MCP 2025-06-18, https://modelcontextprotocol.io/specification/2025-06-18/server/tools#resource-links)
// to restmcp://download/<token>, and a resources/read of that URI within
// linkLifetime, by the same caller, calls the operation again with the same
// arguments (admitted and metered as that tools/call) and returns its bytes
// (up to MaxDownloadBytes) as a blob. The token is the call itself, signed:
// nothing is stored, so any replica that shares LinkSecret reads it.

const (
	// linkPrefix starts every download URI.
	linkPrefix = "restmcp://download/"
	// linkLifetime is how long a link may be read.
	linkLifetime = 10 * time.Minute
)

// link is what a download URI's token carries.
type link struct {
	Tool    string          `json:"t"`
	Args    json.RawMessage `json:"a"`
	KeyID   string          `json:"k"` // the caller's ("" for one without a key); another cannot read it
	Expires int64           `json:"e"` // Unix seconds
}

// linkSecret is the HMAC key of s's links.
func (s *Server) linkSecret() []byte {
	s.linkOnce.Do(func() {
		s.linkKey = s.opts.LinkSecret
		if len(s.linkKey) == 0 {
			s.linkKey = make([]byte, 32)
			_, _ = rand.Read(s.linkKey)
		}
	})
	return s.linkKey
}

// makeLink is the download URI of a call of tool with args by keyID.
func (s *Server) makeLink(tool string, args json.RawMessage, keyID string) string {
	payload, _ := json.Marshal(link{Tool: tool, Args: args, KeyID: keyID, Expires: time.Now().Add(linkLifetime).Unix()})
	mac := hmac.New(sha256.New, s.linkSecret())
	mac.Write(payload)
	return linkPrefix + base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// readLink reads a download URI: ok only when its signature holds and it
// has not expired. The caller is checked by the reader.
func (s *Server) readLink(uri string) (link, bool) {
	token, ok := strings.CutPrefix(uri, linkPrefix)
	if !ok || s.opts.BinaryLinkBytes <= 0 || len(token) > 64<<10 {
		return link{}, false
	}
	p64, m64, ok := strings.Cut(token, ".")
	if !ok {
		return link{}, false
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	sum, err2 := base64.RawURLEncoding.DecodeString(m64)
	if err1 != nil || err2 != nil {
		return link{}, false
	}
	mac := hmac.New(sha256.New, s.linkSecret())
	mac.Write(payload)
	if !hmac.Equal(sum, mac.Sum(nil)) {
		return link{}, false
	}
	var l link
	if json.Unmarshal(payload, &l) != nil || time.Now().Unix() > l.Expires || l.Tool == "" {
		return link{}, false
	}
	return l, true
}

// downloadKey marks a call made to read a link: its binary answer is read
// whole (up to MaxDownloadBytes), never linked again.
type downloadKey struct{}

// linkResult is the result of a call whose binary answer is a link: a
// resource_link and a line saying how to read it.
func (s *Server) linkResult(tool string, args json.RawMessage, keyID, mediaType string, size int64) *mcp.CallToolResult {
	uri := s.makeLink(tool, args, keyID)
	about := mediaType
	if size >= 0 {
		about += ", " + strconv.FormatInt(size, 10) + " bytes"
	}
	rl := &mcp.ResourceLink{URI: uri, Name: tool + " answer", MIMEType: mediaType}
	if size >= 0 {
		rl.Size = &size
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "The answer is a file (" + about + "), too large to return inline: read it with resources/read of the linked URI within " +
			strconv.Itoa(int(linkLifetime.Minutes())) + " minutes (the read is metered as a call of " + tool + ")."},
		rl,
	}}
}

// linker is how a call of t by a's caller returns a binary answer past
// BinaryLinkBytes: a link to this same call; nil when links are off, t is
// not a GET, or the call is itself reading a link.
func (s *Server) linker(ctx context.Context, t *openapi.Tool, a *admission, args json.RawMessage) func(string, int64) *mcp.CallToolResult {
	if s.opts.BinaryLinkBytes <= 0 || t.Method != http.MethodGet || ctx.Value(downloadKey{}) != nil {
		return nil
	}
	keyID := a.call.KeyID
	if a.anonymous {
		keyID = ""
	}
	return func(mediaType string, size int64) *mcp.CallToolResult {
		return s.linkResult(t.Name, args, keyID, mediaType, size)
	}
}

// addDownloads registers the download URIs' template with the MCP server.
func (s *Server) addDownloads() {
	if s.opts.BinaryLinkBytes <= 0 {
		return
	}
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: linkPrefix + "{token}", Name: "download",
		Description: "A binary answer too large to return inline, read once the tool call that linked it is done"}, s.readDownload)
}

// readDownload answers resources/read of a download URI: the caller must
// be the one the link was made for; the operation is called again with
// the link's arguments and its bytes returned as a blob.
func (s *Server) readDownload(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	l, ok := s.readLink(uri)
	ex := exchangeFrom(ctx)
	if !ok || ex == nil || ex.admission == nil || !ex.admission.forKey(l.KeyID) {
		return nil, &jsonrpc.Error{Code: codeResourceNotFound, Message: "resource " + clipURI(uri) + ": not a download link of this caller, or expired; call the tool again for a new link"}
	}
	h := s.tableFor(ctx).opHandlers[l.Tool]
	if h == nil {
		return nil, &jsonrpc.Error{Code: codeInternalError, Message: "resource " + clipURI(uri) + ": its operation " + l.Tool + " is no longer served"}
	}
	res, err := h(context.WithValue(ctx, downloadKey{}, true), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: l.Tool, Arguments: l.Args}})
	if err != nil {
		return nil, err
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		} else if mediaType, data, ok := blobOf(c); ok && !res.IsError {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mediaType, Blob: data}}}, nil
		}
	}
	if text == "" {
		text = "the answer is no longer a file"
	}
	return nil, &jsonrpc.Error{Code: codeInternalError, Message: "resource " + clipURI(uri) + ": " + text}
}

// blobOf is the media type and bytes of a binary content item (what
// binaryResult makes: image, audio, or an embedded blob).
func blobOf(c mcp.Content) (string, []byte, bool) {
	switch c := c.(type) {
	case *mcp.ImageContent:
		return c.MIMEType, c.Data, true
	case *mcp.AudioContent:
		return c.MIMEType, c.Data, true
	case *mcp.EmbeddedResource:
		if c.Resource != nil {
			return c.Resource.MIMEType, c.Resource.Blob, true
		}
	}
	return "", nil, false
}

// clipURI shortens a download URI for messages: past 60 bytes, its first
// 57 and "…".
func clipURI(uri string) string {
	if len(uri) > 60 {
		return clip.String(uri, 57)
	}
	return uri
}

// isDownload reports whether resp answers a call made to read a link.
func isDownload(resp *http.Response) bool {
	return resp.Request != nil && resp.Request.Context().Value(downloadKey{}) != nil
}
