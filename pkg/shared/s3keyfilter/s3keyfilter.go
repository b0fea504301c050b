// Package s3keyfilter is the one place that knows how an object key, or a
// fragment of one (the stack's uploadPrefix and uploadSuffix), reads once
// S3 has URL-encoded it, and which fragments the stack refuses to filter
// on. infra/ puts the encoded form in the bucket's notification filter and
// both forms in the EventBridge upload rule, pkg/shared/s3event encodes
// the keys of the notifications the rig and the backfill build, the
// settings refuse what cannot be matched, and doctor compares filters and
// follows its smoke uploads with it.
//
// S3's rule, from the S3 User Guide, "Configuring event notifications
// using object key name filtering"
// (docs.aws.amazon.com/AmazonS3/latest/userguide/notification-how-to-filtering.html):
// "If your prefix or suffix contains a space, you must replace it with the
// "+" character. If you use any other special characters in the value of
// the prefix or suffix, you must enter them in URL-encoded
// (percent-encoded) format." The IAM grant on bucket/<prefix>* is matched
// against the key as stored and so stays raw.
package s3keyfilter

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// MaxLen is the longest filter value S3 takes, counted on the encoded
// form: the S3 API's FilterRule says "The maximum length is 1,024
// characters" of the value the configuration carries.
const MaxLen = 1024

// Encode is key (or a fragment of one) as S3 writes keys into its event
// notifications and as a notification filter must spell it: form encoding
// (space as "+", every byte outside letters, digits and -_.~ as %XX of its
// UTF-8 encoding) with "/" kept. The encoding is character by character,
// so the encoded form of a prefix is a prefix of the encoded key, and
// likewise for a suffix.
func Encode(key string) string {
	segments := strings.Split(key, "/")
	for i, s := range segments {
		segments[i] = url.QueryEscape(s)
	}
	return strings.Join(segments, "/")
}

// Avoid are the characters S3's object key naming guidelines list under
// "Characters to avoid" (docs.aws.amazon.com/AmazonS3/latest/userguide/object-keys.html:
// "Avoid the following characters in a key name because of significant
// special handling for consistency across all applications"), but for
// "%": a percent sign has one encoding, %25, the same under every reading,
// and S3's encoded keys are made of it. The others are refused in a
// filter: some clients and consoles rewrite or drop them, so a filter on
// them may never see the key it was written for, and nothing would page.
const Avoid = "\\{}^[]`\"<>#|~"

// Check refuses a fragment the stack cannot promise to match: a leading
// "/" (S3 keys have none), an encoded form longer than MaxLen, a character
// S3 says to avoid (Avoid), or a non-printable character (S3 lists ASCII
// 0-31 and 127 among the characters that need special handling, and the
// non-printable 128-255 among those to avoid: XML 1.0, which S3's
// notification configuration is written in, cannot carry most of them).
// The error quotes the rule.
func Check(fragment string) error {
	if strings.HasPrefix(fragment, "/") {
		return fmt.Errorf("starts with /: S3 keys do not, so it would match nothing")
	}
	if n := len(Encode(fragment)); n > MaxLen {
		return fmt.Errorf("%d characters once URL-encoded: S3 takes filter values of at most %d", n, MaxLen)
	}
	for _, r := range fragment {
		switch {
		case strings.ContainsRune(Avoid, r):
			return fmt.Errorf("holds %q, which S3's object key naming guidelines list among the characters to avoid in a key name (%s)", r, AvoidList())
		case !unicode.IsPrint(r):
			return fmt.Errorf("holds the non-printable character %U, which S3's object key naming guidelines say to avoid", r)
		}
	}
	return nil
}

// AvoidList is Avoid spaced out for a message.
func AvoidList() string {
	return strings.Join(strings.Split(Avoid, ""), " ")
}
