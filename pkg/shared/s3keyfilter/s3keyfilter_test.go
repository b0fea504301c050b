package s3keyfilter

import (
	"strings"
	"testing"
)

func TestEncode(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"photos/", "photos/"},
		{"Photos 2024/", "Photos+2024/"},
		{"a+b/", "a%2Bb/"},
		{"100%/", "100%25/"},
		{"you&me/", "you%26me/"},
		{"été/", "%C3%A9t%C3%A9/"},
		{"日本/", "%E6%97%A5%E6%9C%AC/"},
		{"x=1;y:2,z?@$", "x%3D1%3By%3A2%2Cz%3F%40%24"},
		{"keep-_.~/", "keep-_.~/"},
		{".jpg", ".jpg"},
	} {
		if got := Encode(tt.in); got != tt.want {
			t.Errorf("Encode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The encoded prefix and suffix of a key are the prefix and suffix of its
// encoded form, so a filter written encoded matches the keys S3 encodes.
func TestEncodeKeepsAffixes(t *testing.T) {
	for _, key := range []string{"Photos 2024/été 1+1=2 100%.jpg", "a&b/c d/e.JPG", "日本/x y.jpeg"} {
		for i := range key {
			prefix, suffix := key[:i], key[i:]
			if !strings.HasPrefix(Encode(key), Encode(prefix)) && isBoundary(key, i) {
				t.Errorf("Encode(%q) does not start with Encode(%q)", key, prefix)
			}
			if !strings.HasSuffix(Encode(key), Encode(suffix)) && isBoundary(key, i) {
				t.Errorf("Encode(%q) does not end with Encode(%q)", key, suffix)
			}
		}
	}
}

// isBoundary: i starts a character (a fragment is whole characters).
func isBoundary(s string, i int) bool { return i == 0 || s[i]&0xC0 != 0x80 }

func TestCheck(t *testing.T) {
	for _, ok := range []string{"", "photos/", "Photos 2024/", "a+b/", "100%/", "you&me/", "été/", ".jpg", strings.Repeat("a", MaxLen)} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q) = %v, want nil", ok, err)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"/photos/", "starts with /"},
		{"a{b}/", `holds '{', which S3's object key naming guidelines list among the characters to avoid`},
		{"back\\slash/", "characters to avoid in a key name (\\ { } ^ [ ] ` \" < > # | ~)"},
		{"tab\there/", "non-printable character U+0009"},
		{"del\x7f/", "non-printable character U+007F"},
		{"c1\u0085/", "non-printable character U+0085"},
		// 171 é of six characters each once encoded (%C3%A9): 1,026.
		{strings.Repeat("é", 171), "1026 characters once URL-encoded"},
	} {
		err := Check(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Check(%q) = %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
}
