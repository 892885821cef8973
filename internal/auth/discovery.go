package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// issuerMetadata is what nexus reads of an authorization server's metadata
// (RFC 8414 §2; OpenID Connect Discovery 1.0 §3 has the same names).
type issuerMetadata struct {
	Issuer                string   `json:"issuer"`
	JWKSURI               string   `json:"jwks_uri"`
	IntrospectionEndpoint string   `json:"introspection_endpoint"`
	ScopesSupported       []string `json:"scopes_supported"`
	// What the page's sign-in needs (signin.go).
	AuthorizationEndpoint         string   `json:"authorization_endpoint"`
	TokenEndpoint                 string   `json:"token_endpoint"`
	RegistrationEndpoint          string   `json:"registration_endpoint"`
	TokenEndpointAuthMethods      []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported"`
}

// maxDocument caps a metadata, JWKS or introspection answer.
const maxDocument = 1 << 20

// checkIssuer accepts an issuer identifier (RFC 8414 §2): an https URL
// without query or fragment; http only on a loopback host, for tests and
// an issuer on the same machine.
func checkIssuer(issuer string) (*url.URL, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("issuer %q: not an absolute URL", issuer)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("issuer %q: an issuer has no query or fragment", issuer)
	}
	if err := checkFetchURL(u); err != nil {
		return nil, fmt.Errorf("issuer %q: %w", issuer, err)
	}
	return u, nil
}

// checkFetchURL refuses to fetch keys or metadata over plain HTTP except
// from this machine: a network attacker could otherwise hand nexus keys.
func checkFetchURL(u *url.URL) error {
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return errors.New("http is allowed only on a loopback host; use https")
	}
	return fmt.Errorf("scheme %q: use https", u.Scheme)
}

// checkEndpoint accepts a URL nexus will call: absolute, and fetchable as
// checkFetchURL says.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errors.New("not an absolute URL")
	}
	return checkFetchURL(u)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// metadataURLs are where an issuer's metadata may be, in the order MCP's
// authorization specification tries them: RFC 8414's well-known URI (the
// issuer's path after it), then OpenID Connect's, inserted and appended.
func metadataURLs(issuer *url.URL) []string {
	base := issuer.Scheme + "://" + issuer.Host
	path := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if path == "" {
		return []string{base + "/.well-known/oauth-authorization-server", base + "/.well-known/openid-configuration"}
	}
	return []string{
		base + "/.well-known/oauth-authorization-server" + path,
		base + "/.well-known/openid-configuration" + path,
		base + path + "/.well-known/openid-configuration",
	}
}

// discover fetches the issuer's metadata from the first place that has
// it. The document must name the issuer exactly (RFC 8414 §3.3), or a
// server at that address could speak for another.
func discover(ctx context.Context, client *http.Client, issuer string) (*issuerMetadata, error) {
	u, err := checkIssuer(issuer)
	if err != nil {
		return nil, err
	}
	var tried []string
	for _, at := range metadataURLs(u) {
		var md issuerMetadata
		status, err := getJSON(ctx, client, at, &md)
		if err != nil || status != http.StatusOK {
			if err == nil {
				err = fmt.Errorf("HTTP %d", status)
			}
			tried = append(tried, at+": "+err.Error())
			continue
		}
		if md.Issuer != issuer {
			return nil, fmt.Errorf("issuer metadata at %s names issuer %q, not %q (--auth-issuer must be the issuer exactly as its tokens say)", at, md.Issuer, issuer)
		}
		if md.JWKSURI != "" {
			if err := checkEndpoint(md.JWKSURI); err != nil {
				return nil, fmt.Errorf("issuer metadata at %s: jwks_uri %q: %w", at, md.JWKSURI, err)
			}
		}
		return &md, nil
	}
	return nil, fmt.Errorf("no metadata for issuer %s (tried %s)", issuer, strings.Join(tried, "; "))
}

// getJSON GETs url and decodes a 200's JSON body into v; other statuses
// are returned without decoding.
func getJSON(ctx context.Context, client *http.Client, url string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxDocument))
		return resp.StatusCode, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return resp.StatusCode, err
	}
	if len(body) > maxDocument {
		return resp.StatusCode, fmt.Errorf("answer larger than %d bytes", maxDocument)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return resp.StatusCode, fmt.Errorf("not JSON: %w", err)
	}
	return resp.StatusCode, nil
}
