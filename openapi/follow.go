package openapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// NewFollowRequest builds a request that follows up on a call of t: a GET
// of the status resource a 202 Accepted named, of the result a finished
// job points to, or the DELETE / POST that cancels the job. It carries no
// arguments and no body, only the caller's key, placed as t's security
// requirement places it (C25): a query credential replaces any value u
// already has under that name. scheme is as in NewRequestPresented. It
// returns a *CredentialError when the key cannot be placed (a character no
// header or cookie can carry) and nothing is sent.
func (t *Tool) NewFollowRequest(ctx context.Context, method string, u *url.URL, key, scheme string) (*http.Request, error) {
	if t.plan == nil {
		return nil, fmt.Errorf("openapi: tool has no request plan")
	}
	var creds []credential
	if key != "" && t.plan.sec != nil {
		creds = t.plan.sec.withKey
	}
	target := *u
	var q strings.Builder
	if names := t.CredentialQueryNames(); len(names) > 0 && target.RawQuery != "" {
		kept := target.Query()
		for _, n := range names {
			kept.Del(n)
		}
		q.WriteString(kept.Encode())
	} else {
		q.WriteString(target.RawQuery)
	}
	header := make(http.Header, 4)
	cookies, err := t.plan.writeCredentials(creds, key, scheme, &q, header, nil)
	if err != nil {
		return nil, err
	}
	if len(cookies) > 0 {
		header.Set("Cookie", strings.Join(cookies, "; "))
	}
	target.RawQuery = q.String()
	req, err := http.NewRequestWithContext(ctx, method, target.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("building the follow-up request for %s: %w", t.Name, err)
	}
	req.Header = header
	if method == http.MethodGet && t.plan.accept != "" {
		req.Header.Set("Accept", t.plan.accept)
	}
	return req, nil
}

// Serves reports whether u is a request URL of t's operation: its path is
// t's server base path and path template with every parameter filled, and
// each query parameter one t declares (credentials aside).
func (t *Tool) Serves(u *url.URL) bool {
	if t.plan == nil {
		return false
	}
	_, ok := t.argumentsFor(u)
	return ok
}
