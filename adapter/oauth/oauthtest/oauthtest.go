// Package oauthtest plays the user's browser on restmcp's sign-in page, for
// tests that drive the OAuth front with a real OAuth client (the go-sdk's
// auth.AuthorizationCodeHandler).
package oauthtest

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

var (
	hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
	actionRE = regexp.MustCompile(`<form method="post" action="([^"]+)">`)
)

// SignIn returns an AuthorizationCodeFetcher that opens the authorization
// URL, posts key on the sign-in form (with its CSRF cookie and token), and
// returns the code, state and iss of the redirect back to the client. A
// sign-in page that answers with anything but the redirect is an error
// carrying the page's status and body.
func SignIn(hc *http.Client, key string) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		back, err := Authorize(ctx, hc, args.URL, key)
		if err != nil {
			return nil, err
		}
		q := back.Query()
		if e := q.Get("error"); e != "" {
			return nil, fmt.Errorf("sign-in redirected with error %s: %s", e, q.Get("error_description"))
		}
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}

// Authorize opens the authorization URL authURL, posts key on the sign-in
// form (with its CSRF cookie and token) and returns where the sign-in
// redirects: the client's redirect URI with the code (or error), state and
// iss. It does not follow that redirect.
func Authorize(ctx context.Context, hc *http.Client, authURL, key string) (*url.URL, error) {
	noRedirect := *hc
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	page, err := get(ctx, &noRedirect, authURL)
	if err != nil {
		return nil, err
	}
	if page.status != http.StatusOK {
		return nil, fmt.Errorf("sign-in page: HTTP %d: %s", page.status, page.body)
	}
	form := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(page.body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	form.Set("api_key", key)
	form.Set("action", "allow")
	m := actionRE.FindStringSubmatch(page.body)
	if m == nil {
		return nil, errors.New("sign-in page has no form")
	}
	base, _ := url.Parse(authURL)
	action, err := base.Parse(html.UnescapeString(m[1]))
	if err != nil {
		return nil, err
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, action.String(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", strings.Split(page.header.Get("Set-Cookie"), ";")[0])
	resp, err := noRedirect.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("sign-in: HTTP %d: %s", resp.StatusCode, body)
	}
	return url.Parse(resp.Header.Get("Location"))
}

type page struct {
	status int
	header http.Header
	body   string
}

func get(ctx context.Context, hc *http.Client, u string) (page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return page{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return page{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return page{resp.StatusCode, resp.Header, string(b)}, err
}
