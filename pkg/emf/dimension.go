package emf

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// CloudWatch's rules for dimensions (API Reference, Dimension): a name is 1
// to 255 ASCII characters, a value 1 to 1,024; both have at least one
// non-whitespace character and no ASCII control character, and a name
// does not start with a colon. A metric whose dimension breaks them is
// dropped by CloudWatch Logs without a word, so the writer never emits one.
const (
	MaxDimensionNameLength  = 255
	MaxDimensionValueLength = 1024
)

// CheckDimension reports whether CloudWatch accepts a dimension: nil, or
// an error saying which rule name or value breaks. The local alarm
// evaluator applies it, so the rig refuses what CloudWatch would drop.
func CheckDimension(name, value string) error {
	if why := checkDimensionName(name); why != "" {
		return fmt.Errorf("dimension name %q: %s", truncate(name, 80), why)
	}
	if why := checkDimensionValue(value); why != "" {
		return fmt.Errorf("dimension %s: value %q: %s", name, truncate(value, 80), why)
	}
	return nil
}

// checkDimensionName reports why name breaks CloudWatch's rules, "" when it
// keeps them. Names are the program's own constants: a bad one is a bug.
func checkDimensionName(name string) string {
	switch {
	case len(name) > MaxDimensionNameLength:
		return "longer than 255 characters"
	case strings.HasPrefix(name, ":"):
		return "starts with a colon"
	}
	return checkText(name)
}

// checkDimensionValue reports why value breaks CloudWatch's rules, "" when
// it keeps them.
func checkDimensionValue(value string) string {
	if len(value) > MaxDimensionValueLength {
		return "longer than 1,024 characters"
	}
	return checkText(value)
}

// checkText: ASCII only, no control character, at least one character
// that is not whitespace.
func checkText(s string) string {
	blank := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			return "not ASCII"
		case c < 0x20 || c == 0x7f:
			return "holds a control character"
		case c != ' ':
			blank = false
		}
	}
	if blank {
		return "empty or only whitespace"
	}
	return ""
}

// standIn is the value published in place of one that breaks the rules:
// its printable ASCII characters, every other byte as "_", cut to fit, and
// a short hash of the original, so that two different bad values stay two
// dimension values. A value with nothing printable is "invalid" and the
// hash.
func standIn(value string) string {
	sum := sha256.Sum256([]byte(value))
	tag := "~" + hex.EncodeToString(sum[:4])
	var b strings.Builder
	for i := 0; i < len(value) && b.Len() < MaxDimensionValueLength-len(tag); i++ {
		c := value[i]
		if c < 0x20 || c >= 0x7f {
			c = '_'
		}
		b.WriteByte(c)
	}
	kept := b.String()
	if strings.Trim(kept, " _") == "" {
		kept = "invalid"
	}
	return kept + tag
}

// reported remembers the bad values already logged, so each is logged once
// per process (an execution environment), whatever the recorders; bounded,
// since the values come from outside.
var reported = struct {
	sync.Mutex
	seen map[string]bool
}{seen: map[string]bool{}}

// maxReported bounds the remembered values; past it a bad value is logged
// each time it is met, which a flood of distinct bad values makes rare.
const maxReported = 1024

// safeDimensionValue returns value, or its stand-in, logging a stand-in the
// first time this process meets the value.
func safeDimensionValue(logger *slog.Logger, name, value string) string {
	why := checkDimensionValue(value)
	if why == "" {
		return value
	}
	safe := standIn(value)
	reported.Lock()
	first := !reported.seen[value]
	if first && len(reported.seen) < maxReported {
		reported.seen[value] = true
	}
	reported.Unlock()
	if first {
		// The value is quoted bounded: it came from outside.
		logger.Warn("emf: a dimension value breaks CloudWatch's rules; published as a stand-in",
			slog.String("dimension", name), slog.String("reason", why),
			slog.String("value", strings.ToValidUTF8(truncate(value, 200), "?")), slog.String("stand_in", safe))
	}
	return safe
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
