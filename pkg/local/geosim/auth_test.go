package geosim

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestAuthentication(t *testing.T) {
	sim, base := newTestServer(t)
	other := sim.IssueKey(DefaultOrg, "rotating")
	rotated := sim.RegenerateKey(other)
	revoked := sim.IssueKey(DefaultOrg, "revoked")
	if !sim.RevokeKey(revoked) {
		t.Fatal("RevokeKey of a live key reported false")
	}
	tests := []struct {
		name   string
		key    string
		status int
	}{
		{"no key", "", 401},
		{"unknown key", "geo_test_fake_key_unknown", 401},
		{"wrong prefix", "sk_test_fake_key_1", 401},
		{"regenerated old value", other, 401},
		{"regenerated new value", rotated, 200},
		{"revoked", revoked, 401},
		{"demo key", testKey, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{PathCredits, PathPredict} {
				var resp response
				if path == PathPredict {
					resp = predict(t, base, tt.key, nil, testJPEG(t, 1))
				} else {
					resp = get(t, base, path, tt.key)
				}
				if resp.status != tt.status {
					t.Errorf("%s: status %d, want %d", path, resp.status, tt.status)
				}
				if tt.status == 401 {
					want := CodeInvalidKey
					if tt.key == "" {
						want = CodeAuthRequired
					}
					if resp.json(t)["message_code"] != want {
						t.Errorf("%s: body %s", path, resp.body)
					}
					if tt.key != "" && bytes.Contains(resp.body, []byte(tt.key)) {
						t.Errorf("%s: the key is echoed in the body", path)
					}
				}
			}
		})
	}
}

func TestKeysAreFakeAndNeverRecorded(t *testing.T) {
	sim, base := newTestServer(t)
	key := sim.IssueKey("acme", "ci")
	if !strings.HasPrefix(key, "geo_sim_") || key == sim.IssueKey("acme", "ci") {
		t.Errorf("issued key %q: want a unique geo_sim_ value", key)
	}
	if sim.RegenerateKey("geo_test_fake_key_nope") != "" {
		t.Error("RegenerateKey of an unknown key returned a value")
	}
	get(t, base, PathCredits, key)
	predict(t, base, testKey, nil, testJPEG(t, 1))
	calls := sim.Calls()
	if len(calls) != 2 || calls[0].Org != "acme" || calls[0].KeyName != "ci" || calls[0].KeyID == "" {
		t.Fatalf("calls %+v", calls)
	}
	dump := fmt.Sprintf("%+v", calls)
	for _, k := range []string{key, testKey} {
		if strings.Contains(dump, k) {
			t.Errorf("call records contain a key")
		}
	}
}

func TestRegenerateKeepsIdentity(t *testing.T) {
	sim, base := newTestServer(t)
	fresh := sim.RegenerateKey(testKey)
	if resp := get(t, base, PathCredits, fresh); resp.status != http.StatusOK {
		t.Fatalf("new key: status %d", resp.status)
	}
	if c := sim.Calls()[0]; c.Org != DefaultOrg || c.KeyName != DefaultKeyName || c.KeyID != "key-1" {
		t.Errorf("call after regeneration: %+v", c)
	}
}
