package envvars

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/shared/keyheader"
)

// Parser reads and validates variables through getenv (os.Getenv in the
// functions), collecting every problem so a cold start reports them all at
// once. Each message names the variable and what it accepts; values are
// quoted only for variables that cannot hold a secret.
type Parser struct {
	getenv func(string) string
	errs   []error
}

// NewParser reads through getenv.
func NewParser(getenv func(string) string) *Parser { return &Parser{getenv: getenv} }

// Err returns every problem found, or nil.
func (p *Parser) Err() error { return errors.Join(p.errs...) }

// Fail records a problem with the variable name.
func (p *Parser) Fail(name, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s %s", name, fmt.Sprintf(format, args...)))
}

// Str is the trimmed value, "" when unset.
func (p *Parser) Str(name string) string { return strings.TrimSpace(p.getenv(name)) }

// StrDefault is the value, or def when unset.
func (p *Parser) StrDefault(name, def string) string {
	if v := p.Str(name); v != "" {
		return v
	}
	return def
}

// Required is the value, recording a problem when it is unset.
func (p *Parser) Required(name string) string {
	v := p.Str(name)
	if v == "" {
		p.Fail(name, "is required")
	}
	return v
}

// URL is a required absolute http or https URL.
func (p *Parser) URL(name string) string {
	v := p.Required(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil {
		p.Fail(name, "must be an absolute http or https URL: %v", err)
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.Fail(name, "must be an absolute http or https URL, got %q", u.Redacted())
	}
	return v
}

// IntRange is an integer in [lo, hi], def when unset.
func (p *Parser) IntRange(name string, def, lo, hi int) int {
	v := p.Str(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		p.Fail(name, "must be an integer from %d to %d, got %q", lo, hi, v)
		return def
	}
	return n
}

// FloatMin is a number of at least lo (and at most 1e9), def when unset.
func (p *Parser) FloatMin(name string, def, lo float64) float64 {
	v := p.Str(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < lo || f != f || f > 1e9 {
		p.Fail(name, "must be a number of at least %g, got %q", lo, v)
		return def
	}
	return f
}

// Bool is true or false (strconv.ParseBool), def when unset.
func (p *Parser) Bool(name string, def bool) bool {
	v := p.Str(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.Fail(name, "must be true or false, got %q", v)
		return def
	}
	return b
}

// OneOf is one of the allowed values (compared lower-cased), def when unset.
func (p *Parser) OneOf(name, def string, allowed ...string) string {
	v := strings.ToLower(p.Str(name))
	if v == "" {
		return def
	}
	if slices.Contains(allowed, v) {
		return v
	}
	p.Fail(name, "must be one of %s, got %q", strings.Join(allowed, ", "), v)
	return def
}

// DurationMin is a Go duration of at least lo, def when unset.
func (p *Parser) DurationMin(name string, def, lo time.Duration) time.Duration {
	v := p.Str(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo {
		p.Fail(name, "must be a Go duration of at least %s (e.g. 15m), got %q", lo, v)
		return def
	}
	return d
}

// LogLevel is debug, info, warn(ing) or error, lower-cased; "info" when unset.
func (p *Parser) LogLevel(name string) string {
	v := strings.ToLower(p.Str(name))
	switch v {
	case "":
		return "info"
	case "debug", "info", "warn", "warning", "error":
		return v
	}
	p.Fail(name, "must be one of debug, info, warn, error, got %q", v)
	return "info"
}

// KeyHeader is the name of the header that carries the API key, checked
// by keyheader.Check; keyheader.Default when unset.
func (p *Parser) KeyHeader(name string) string {
	v := p.StrDefault(name, keyheader.Default)
	if err := keyheader.Check(v); err != nil {
		p.Fail(name, "is not usable: %v", err)
		return keyheader.Default
	}
	return v
}

// KeySource reads where the API key comes from: the Secrets Manager secret
// (SecretID, the deployed path) or, for local runs, the key itself (APIKey).
// When the secret is set the local key is ignored. The key's value never
// appears in a message.
func (p *Parser) KeySource() (secretID, apiKey string) {
	secretID, apiKey = p.Str(SecretID), p.Str(APIKey)
	switch {
	case secretID != "":
		return secretID, ""
	case apiKey == "":
		p.Fail(SecretID+" or "+APIKey, "is required: the Secrets Manager id of the key (deployed) or the key itself (local runs)")
	case !strings.HasPrefix(apiKey, "geo_"):
		p.Fail(APIKey, `must start with "geo_"`)
	}
	return secretID, apiKey
}
