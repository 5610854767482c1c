package openapi

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// credential says where the caller's key goes for one security scheme.
type credential struct {
	kind string // "header", "query", "cookie" (apiKey), "bearer" or "basic"
	name string // header, query parameter or cookie name for apiKey
}

// securityPlan is the precomputed credential placement of one operation
// (C25). The effective requirement is the operation's security when
// present (security: [] means none), else the document's.
type securityPlan struct {
	// withKey is the first satisfiable non-empty alternative: where the key
	// goes when the caller presented one. Nil when nothing is sent.
	withKey []credential
	// keyRequired: no alternative can be satisfied without a key.
	keyRequired bool
	// schemes names the schemes of withKey for CredentialError.
	schemes []string
	// placement is Tool.CredentialPlacement.
	placement string
}

// label names a placement for the startup summary.
func (c credential) label() string {
	switch c.kind {
	case "header", "query", "cookie":
		return "apiKey " + c.kind + " " + c.name
	case "bearer":
		return "http bearer"
	}
	return "http " + c.kind
}

// parseDefaultSecurity parses LoadOptions.DefaultSecurity.
func parseDefaultSecurity(v string) (*credential, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	parts := strings.Split(v, ":")
	switch {
	case len(parts) == 1 && (parts[0] == "bearer" || parts[0] == "basic"):
		return &credential{kind: parts[0]}, nil
	case len(parts) == 3 && parts[0] == "header" && strings.EqualFold(parts[1], "Authorization") && strings.EqualFold(parts[2], "Bearer"):
		return &credential{kind: "bearer"}, nil
	case len(parts) == 2 && (parts[0] == "header" || parts[0] == "query" || parts[0] == "cookie") && parts[1] != "":
		return &credential{kind: parts[0], name: parts[1]}, nil
	}
	return nil, fmt.Errorf("default_security %q: want header:<Name>, header:Authorization:Bearer, query:<name>, cookie:<name>, bearer or basic", v)
}

// describeScheme names a scheme for CredentialError, e.g.
// "headerKey (X-API-Key in header)".
func describeScheme(name string, s *openapi3.SecurityScheme) string {
	switch s.Type {
	case "apiKey":
		return name + " (" + s.Name + " in " + s.In + ")"
	case "http":
		return name + " (HTTP " + strings.ToLower(s.Scheme) + ")"
	default:
		return name + " (" + s.Type + " bearer token)"
	}
}

// credentialFor maps a scheme to a placement. apiKey goes to its header,
// query parameter or cookie; http bearer, oauth2 and openIdConnect send
// "Authorization: Bearer <key>"; http basic sends the key as given when it
// contains ":" ("user:pass"), else the key as the user name with an empty
// password. Other schemes (mutualTLS, other http schemes) cannot carry a
// single key.
func credentialFor(s *openapi3.SecurityScheme) (credential, bool) {
	switch s.Type {
	case "apiKey":
		switch s.In {
		case "header", "query", "cookie":
			return credential{kind: s.In, name: s.Name}, s.Name != ""
		}
	case "http":
		switch strings.ToLower(s.Scheme) {
		case "bearer":
			return credential{kind: "bearer"}, true
		case "basic":
			return credential{kind: "basic"}, true
		}
	case "oauth2", "openIdConnect":
		return credential{kind: "bearer"}, true
	}
	return credential{}, false
}

func (b *builder) security(op *openapi3.Operation) (*securityPlan, error) {
	reqs := b.doc.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	plan := &securityPlan{}
	if len(reqs) == 0 {
		switch {
		case op.Security != nil || len(b.doc.Security) > 0:
			plan.placement = "none (security: [])"
		case b.defaultCred != nil:
			plan.withKey = []credential{*b.defaultCred}
			plan.keyRequired = true
			plan.schemes = []string{"default_security " + b.opts.DefaultSecurity}
			plan.placement = b.defaultCred.label() + " (default_security)"
		default:
			plan.placement = "none (document declares no security)"
		}
		return plan, nil
	}
	var schemes openapi3.SecuritySchemes
	if b.doc.Components != nil {
		schemes = b.doc.Components.SecuritySchemes
	}
	anonymous := false
	found := false
	for _, alt := range reqs {
		if len(alt) == 0 {
			anonymous = true
			continue
		}
		if found {
			continue
		}
		names := slices.Sorted(maps.Keys(alt))
		var creds []credential
		var descs []string
		ok := true
		for _, n := range names {
			ref := schemes[n]
			if ref == nil || ref.Value == nil {
				b.warn("security scheme " + strconv.Quote(n) + " is not defined in components.securitySchemes")
				ok = false
				break
			}
			c, can := credentialFor(ref.Value)
			if !can {
				ok = false
				break
			}
			if !slices.Contains(creds, c) {
				creds = append(creds, c)
			}
			descs = append(descs, describeScheme(n, ref.Value))
		}
		if ok {
			found = true
			plan.withKey = creds
			plan.schemes = []string{strings.Join(descs, " and ")}
			labels := make([]string, len(creds))
			for i, c := range creds {
				labels[i] = c.label()
			}
			plan.placement = strings.Join(labels, " and ")
		}
	}
	plan.keyRequired = found && !anonymous
	if !found && !anonymous {
		b.warn("no supported security alternative; requests carry no credential")
		plan.placement = "none (no supported security scheme)"
	}
	if !found && anonymous {
		plan.placement = "none (security: [])"
	}
	return plan, nil
}
