package envvars

import (
	"strings"
	"testing"
	"time"
)

func parserFor(env map[string]string) *Parser {
	return NewParser(func(name string) string { return env[name] })
}

func TestParserDefaultsWhenUnset(t *testing.T) {
	p := parserFor(map[string]string{SecretID: "prod/geo"})
	if got := p.StrDefault("X", "d"); got != "d" {
		t.Errorf("StrDefault = %q", got)
	}
	if got := p.IntRange("X", 7, 1, 9); got != 7 {
		t.Errorf("IntRange = %d", got)
	}
	if got := p.FloatMin("X", 2.5, 1); got != 2.5 {
		t.Errorf("FloatMin = %v", got)
	}
	if got := p.Bool("X", true); !got {
		t.Error("Bool default lost")
	}
	if got := p.DurationMin("X", time.Minute, time.Second); got != time.Minute {
		t.Errorf("DurationMin = %v", got)
	}
	if got := p.LogLevel("X"); got != "info" {
		t.Errorf("LogLevel = %q", got)
	}
	if id, key := p.KeySource(); id != "prod/geo" || key != "" {
		t.Errorf("KeySource = %q, %q", id, key)
	}
	if err := p.Err(); err != nil {
		t.Errorf("Err = %v", err)
	}
}

func TestParserReportsEveryBadVariable(t *testing.T) {
	const fakeKey = "not_a_geo_key_fake_1"
	p := parserFor(map[string]string{
		"N": "0", "F": "abc", "B": "maybe", "D": "1s", "L": "loud", "U": "ftp://x", "O": "both", APIKey: fakeKey,
	})
	if got := p.OneOf("O", "shared", "shared", "instance"); got != "shared" {
		t.Errorf("OneOf with a bad value = %q, want the default", got)
	}
	p.IntRange("N", 1, 1, 15)
	p.FloatMin("F", 1, 1)
	p.Bool("B", true)
	p.DurationMin("D", time.Minute, 30*time.Second)
	p.LogLevel("L")
	p.URL("U")
	p.Required("R")
	p.KeySource()
	err := p.Err()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"N must be an integer from 1 to 15", "F must be a number", "B must be true or false",
		"D must be a Go duration of at least 30s", "L must be one of", "U must be an absolute http or https URL",
		"R is required", `O must be one of shared, instance, got "both"`, APIKey + ` must start with "geo_"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, fakeKey) {
		t.Errorf("error shows the key: %s", msg)
	}
}

func TestKeySourceNeedsOne(t *testing.T) {
	p := parserFor(nil)
	p.KeySource()
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), SecretID+" or "+APIKey) {
		t.Errorf("Err = %v", err)
	}
	p = parserFor(map[string]string{APIKey: "geo_test_fake_key_1"})
	if id, key := p.KeySource(); id != "" || key != "geo_test_fake_key_1" || p.Err() != nil {
		t.Errorf("local key: %q %q %v", id, key, p.Err())
	}
}
