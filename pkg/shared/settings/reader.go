package settings

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// Reader parses settings from one source, the CDK context (FromContext)
// or a function's environment (FromEnv), collecting every problem so that
// one synth or one cold start reports them all. Each message names the key
// or variable and what it accepts. The two sources differ only where the
// table says so (EnvMin, EnvDuration, EnvUnknown) and in what an unset
// value means: the context must hold every non-Optional key (cdk.json
// does), while a function falls back to the table's Default.
type Reader struct {
	context bool
	get     func(name string) (string, bool)
	errs    []error
	failed  map[string]bool
	// read holds every name a setting looked up.
	read map[string]bool
	// values holds each setting read and accepted, as its variable
	// carries it (Env).
	values map[*Setting]string
}

// FromContext reads CDK context values through lookup (nil when unset).
// cdk.json gives JSON numbers and booleans, -c always strings: both count.
func FromContext(lookup func(key string) any) *Reader {
	return &Reader{context: true, read: map[string]bool{}, failed: map[string]bool{}, values: map[*Setting]string{}, get: func(key string) (string, bool) {
		switch v := lookup(key).(type) {
		case nil:
			return "", false
		case string:
			return strings.TrimSpace(v), true
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64), true
		case bool:
			return strconv.FormatBool(v), true
		default:
			return fmt.Sprint(v), true
		}
	}}
}

// FromEnv reads environment variables through getenv (os.Getenv in the
// functions); an empty variable is unset.
func FromEnv(getenv func(string) string) *Reader {
	return &Reader{read: map[string]bool{}, failed: map[string]bool{}, values: map[*Setting]string{}, get: func(name string) (string, bool) {
		v := strings.TrimSpace(getenv(name))
		return v, v != ""
	}}
}

// Env is the environment of the functions in fn: each setting they
// receive that was read and accepted (an empty optional one, such as
// topN, stays unset: unset means the service's default), in the form
// its variable takes. The CDK app writes it; a setting the functions
// read therefore needs no line of its own in infra.
func (r *Reader) Env(fn Function) map[string]string {
	env := map[string]string{}
	for s, v := range r.values {
		if s.Functions&fn != 0 && s.Env != "" {
			env[s.Env] = v
		}
	}
	return env
}

// accept records v as s's value and returns it.
func accept[T any](r *Reader, s *Setting, text string, v T) T {
	r.values[s] = text
	return v
}

// Err is every problem found, or nil.
func (r *Reader) Err() error { return errors.Join(r.errs...) }

// Failed reports whether s was refused.
func (r *Reader) Failed(s *Setting) bool { return r.failed[r.name(s)] }

// Fail records a problem with s, named by this source's name for it.
func (r *Reader) Fail(s *Setting, format string, args ...any) {
	r.FailName(r.name(s), format, args...)
}

// FailName records a problem with a key or variable by its name.
func (r *Reader) FailName(name, format string, args ...any) {
	r.failed[name] = true
	prefix := name + " "
	if r.context {
		prefix = fmt.Sprintf("context key %q: ", name)
	}
	r.errs = append(r.errs, errors.New(prefix+fmt.Sprintf(format, args...)))
}

// Name is s's name in this source: its context key or its variable.
func (r *Reader) Name(s *Setting) string { return r.name(s) }

func (r *Reader) name(s *Setting) string {
	if r.context {
		return s.Key
	}
	return s.Env
}

// value is s's text and whether it is set; an unset value that has a
// default here comes back as that default (set true), one that must be
// set is refused (set false).
func (r *Reader) value(s *Setting) (v string, set bool) {
	name := r.name(s)
	r.read[name] = true
	v, ok := r.get(name)
	if ok && v != "" {
		return v, true
	}
	switch {
	case !r.context && s.EnvUnknown:
		return "", false
	case !r.context || s.Optional:
		return s.Default, s.Default != ""
	}
	r.Fail(s, "is missing; want %s (set it in cdk.json or pass -c %s=<value>)", s.want(s.Min, s.Max), s.Key)
	return "", false
}

func (r *Reader) refuse(s *Setting, v string) {
	want := s.want(r.bounds(s))
	if r.context && s.Optional && s.Default == "" && s.Want == "" && s.Kind != Choice {
		want = "empty or " + want
	}
	r.Fail(s, "%q is not allowed; want %s", v, want)
}

// bounds is [Min, Max], EnvMin lowering Min for a function.
func (r *Reader) bounds(s *Setting) (lo, hi float64) {
	lo, hi = s.Min, s.Max
	if !r.context && s.EnvMin != 0 && s.EnvMin < lo {
		lo = s.EnvMin
	}
	return lo, hi
}

// Int reads an Int setting; 0 when unset without a default, or refused.
func (r *Reader) Int(s *Setting) int {
	v, ok := r.value(s)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	lo, hi := r.bounds(s)
	if len(s.Allowed) > 0 {
		if err != nil || !slices.Contains(s.Allowed, strconv.Itoa(n)) {
			r.refuse(s, v)
			return 0
		}
		return accept(r, s, strconv.Itoa(n), n)
	}
	if err != nil || float64(n) < lo || float64(n) > hi {
		r.refuse(s, v)
		return 0
	}
	return accept(r, s, strconv.Itoa(n), n)
}

// Float reads an Int or Number setting as a float64 (a function may take
// a fractional rate); 0 when unset without a default, or refused.
func (r *Reader) Float(s *Setting) float64 {
	v, ok := r.value(s)
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	lo, hi := r.bounds(s)
	if s.Kind == Int && r.context && err == nil && f != math.Trunc(f) {
		err = strconv.ErrSyntax
	}
	if err != nil || math.IsNaN(f) || f < lo || f > hi {
		r.refuse(s, v)
		return 0
	}
	return accept(r, s, strconv.FormatFloat(f, 'f', -1, 64), f)
}

// Duration reads an Int setting counted in unit (seconds, minutes, days);
// with EnvDuration a function's variable is a Go duration within the same
// bounds.
func (r *Reader) Duration(s *Setting, unit time.Duration) time.Duration {
	if r.context || !s.EnvDuration {
		d := time.Duration(r.Int(s)) * unit
		if _, ok := r.values[s]; ok && s.EnvDuration {
			r.values[s] = d.String()
		}
		return d
	}
	r.read[s.Env] = true
	v, ok := r.get(s.Env)
	switch {
	case !ok && s.EnvUnknown:
		return 0
	case !ok:
		return time.Duration(s.DefaultInt()) * unit
	}
	d, err := time.ParseDuration(v)
	lo, hi := r.bounds(s)
	if err != nil || d < time.Duration(lo)*unit || d > time.Duration(hi)*unit {
		r.Fail(s, "%q is not allowed; want a Go duration from %s to %s", v, time.Duration(lo)*unit, time.Duration(hi)*unit)
		return 0
	}
	return d
}

// Bool reads a Bool setting.
func (r *Reader) Bool(s *Setting) bool {
	v, ok := r.value(s)
	if !ok {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.refuse(s, v)
		return false
	}
	return accept(r, s, strconv.FormatBool(b), b)
}

// String reads a Text or Choice setting: a Choice in Allowed's spelling
// (compared case-insensitively), a Text checked by Pattern and Check.
func (r *Reader) String(s *Setting) string {
	v, ok := r.value(s)
	if !ok {
		return ""
	}
	if s.Kind == Choice {
		for _, a := range s.Allowed {
			if strings.EqualFold(a, v) {
				return accept(r, s, a, a)
			}
		}
		r.refuse(s, v)
		return ""
	}
	if s.Pattern != nil && !s.Pattern.MatchString(v) {
		r.refuse(s, v)
		return ""
	}
	if s.Check != nil {
		if err := s.Check(v); err != nil {
			if s.Want == "" {
				r.Fail(s, "%q is not allowed: %v", v, err)
			} else {
				r.Fail(s, "%q is not allowed: %v; want %s", v, err, s.Want)
			}
			return ""
		}
	}
	return accept(r, s, v, v)
}

// URL reads the service URL: in the context an https base URL (Check),
// in a function any absolute http or https URL (the local simulator is
// plain http).
func (r *Reader) URL(s *Setting) string {
	if r.context {
		v := strings.TrimSuffix(r.String(s), "/")
		if _, ok := r.values[s]; ok {
			r.values[s] = v
		}
		return v
	}
	v, ok := r.value(s)
	if !ok {
		r.Fail(s, "is required")
		return ""
	}
	u, err := url.Parse(v)
	if err != nil {
		r.Fail(s, "must be an absolute http or https URL: %v", err)
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		r.Fail(s, "must be an absolute http or https URL, got %q", u.Redacted())
	}
	return v
}

// The variables below are not settings of the table but facts the stack
// or the local rig gives a function (its table, its lease); FromEnv only.

// Str is a variable's trimmed value, "" when unset.
func (r *Reader) Str(name string) string {
	v, _ := r.get(name)
	return v
}

// StrDefault is the value, or def when unset.
func (r *Reader) StrDefault(name, def string) string {
	if v := r.Str(name); v != "" {
		return v
	}
	return def
}

// Required is the value, recording a problem when it is unset.
func (r *Reader) Required(name string) string {
	v := r.Str(name)
	if v == "" {
		r.FailName(name, "is required")
	}
	return v
}

// DurationMin is a Go duration of at least lo, def when unset.
func (r *Reader) DurationMin(name string, def, lo time.Duration) time.Duration {
	v := r.Str(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo {
		r.FailName(name, "must be a Go duration of at least %s (e.g. 15m), got %q", lo, v)
		return def
	}
	return d
}

// KeySource reads where the API key comes from: the Secrets Manager secret
// (SecretID, the deployed path) or, for local runs, the key itself (APIKey).
// When the secret is set the local key is ignored. The key's value never
// appears in a message.
func (r *Reader) KeySource() (secretID, apiKey string) {
	secretID, apiKey = r.Str(envvars.SecretID), r.Str(envvars.APIKey)
	switch {
	case secretID != "":
		return secretID, ""
	case apiKey == "":
		r.FailName(envvars.SecretID+" or "+envvars.APIKey, "is required: the Secrets Manager id of the key (deployed) or the key itself (local runs)")
	case !strings.HasPrefix(apiKey, "geo_"):
		r.FailName(envvars.APIKey, `must start with "geo_"`)
	}
	return secretID, apiKey
}
