// Package keyheader names the request header that carries the API key and
// checks a configured name, so the client, both functions' configuration,
// the CLI and the CDK app accept exactly the same names.
//
// The contract sends the key in X-Service-Key; a deployment of the service
// may read another name (the public backend reads a product-specific
// header), hence the setting (cdk.json apiKeyHeader, GEO_API_KEY_HEADER).
package keyheader

import (
	"fmt"
	"strings"
)

// Default is the contract's header.
const Default = "X-Service-Key"

// maxLength bounds a name: real header names are short, and the name is
// quoted in error messages.
const maxLength = 128

// reserved are headers the client sets itself or that would carry the key
// where proxies and logs expect other things.
var reserved = []string{"authorization", "proxy-authorization", "content-type", "content-length",
	"host", "user-agent", "accept", "cookie", "transfer-encoding", "connection"}

// Check reports whether name can carry the key: an HTTP field name (RFC 9110
// token: letters, digits and !#$%&'*+-.^_`|~), at most 128 characters, and
// not one of the headers the client sets for other purposes.
func Check(name string) error {
	if name == "" {
		return fmt.Errorf("the key header name is empty")
	}
	if len(name) > maxLength {
		return fmt.Errorf("the key header name is %d characters long; at most %d", len(name), maxLength)
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return fmt.Errorf("the key header name %q has a character an HTTP header name cannot hold at position %d (letters, digits and !#$%%&'*+-.^_`|~ only)", name, i+1)
		}
	}
	for _, r := range reserved {
		if strings.EqualFold(name, r) {
			return fmt.Errorf("the key header name %q is a header the client sets for another purpose", name)
		}
	}
	return nil
}

func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
