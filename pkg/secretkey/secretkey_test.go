package secretkey_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/secretkey/secretkeytest"
)

const (
	oldKey = "geo_test_fake_key_1"
	newKey = "geo_test_fake_key_2"
)

func newProvider(t *testing.T, fake *secretkeytest.SecretsManager, id string, clock func() time.Time) *secretkey.SecretsManagerProvider {
	t.Helper()
	p, err := secretkey.NewSecretsManager(fake, id, func(o *secretkey.SecretsManagerOptions) {
		o.TTL = time.Hour
		o.MinRefreshInterval = 5 * time.Second
		o.Clock = clock
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRotation(t *testing.T) {
	ctx := context.Background()
	const id = "geo/api-key"
	fake := secretkeytest.New(id, oldKey)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newProvider(t, fake, id, func() time.Time { return now })

	for range 3 {
		if key, err := p.Key(ctx); err != nil || key != oldKey {
			t.Fatalf("Key = %q, %v; want the first key", key, err)
		}
	}
	if n := fake.Calls(); n != 2 {
		t.Errorf("3 Key calls made %d API calls, want 2 (describe + get, then cached)", n)
	}

	fake.Rotate(newKey)
	if key, _ := p.Key(ctx); key != oldKey {
		t.Errorf("Key right after rotation = %q, want the cached old key", key)
	}
	key, err := p.Refresh(ctx)
	if err != nil || key != newKey {
		t.Fatalf("Refresh = %q, %v; want the new key", key, err)
	}
	if key, _ := p.Key(ctx); key != newKey {
		t.Errorf("Key after Refresh = %q, want the new key", key)
	}

	// A storm of 401s: Refresh within the interval does not call the API.
	calls := fake.Calls()
	fake.Rotate("geo_test_fake_key_3")
	for range 10 {
		if key, _ := p.Refresh(ctx); key != newKey {
			t.Fatalf("rate-limited Refresh = %q, want the last read key", key)
		}
	}
	if n := fake.Calls(); n != calls {
		t.Errorf("rate-limited Refresh calls made %d API calls, want 0", n-calls)
	}
	now = now.Add(6 * time.Second)
	if key, _ := p.Refresh(ctx); key != "geo_test_fake_key_3" {
		t.Errorf("Refresh after the interval = %q, want the third key", key)
	}
}

func TestRefreshFailureKeepsCachedKey(t *testing.T) {
	ctx := context.Background()
	fake := secretkeytest.New("geo/api-key", oldKey)
	p := newProvider(t, fake, "geo/api-key", time.Now)
	if _, err := p.Key(ctx); err != nil {
		t.Fatal(err)
	}
	fake.FailWith(errors.New("ThrottlingException"))
	if _, err := p.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "geo/api-key") {
		t.Fatalf("Refresh error = %v, want a failure naming the secret", err)
	}
	if key, err := p.Key(ctx); err != nil || key != oldKey {
		t.Errorf("Key after a failed Refresh = %q, %v; want the cached key", key, err)
	}
}

func TestSecretValueForms(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    string
		wantErr error
	}{
		{"bare", oldKey, oldKey, nil},
		{"bare with newline", oldKey + "\n", oldKey, nil},
		{"json api_key", `{"api_key":"` + oldKey + `"}`, oldKey, nil},
		{"json key", `{"key":"` + oldKey + `"}`, oldKey, nil},
		{"json apiKey", `{"apiKey":"` + oldKey + `"}`, oldKey, nil},
		{"json GEO_API_KEY", `{"GEO_API_KEY":"` + oldKey + `","other":1}`, oldKey, nil},
		{"json string", `"` + oldKey + `"`, oldKey, nil},
		{"empty", "", "", secretkey.ErrEmptySecret},
		{"blank", " \n", "", secretkey.ErrEmptySecret},
		{"json empty field", `{"api_key":""}`, "", secretkey.ErrEmptySecret},
		{"bad prefix", "sk_test_fake_key_1", "", secretkey.ErrKeyFormat},
		{"prefix only", "geo_", "", secretkey.ErrKeyFormat},
		{"inner space", "geo_test fake", "", secretkey.ErrKeyFormat},
		{"json without key field", `{"token":"` + oldKey + `"}`, "", secretkey.ErrKeyFormat},
		{"json number", `{"api_key":12345}`, "", secretkey.ErrKeyFormat},
		{"broken json", `{"api_key":"geo_test_fake_key_1"`, "", secretkey.ErrKeyFormat},
		{"json bad prefix", `{"api_key":"xyz_test_fake"}`, "", secretkey.ErrKeyFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const id = "arn:aws:secretsmanager:us-east-1:000000000000:secret:geo"
			p := newProvider(t, secretkeytest.New(id, tt.value), id, time.Now)
			key, err := p.Key(context.Background())
			if !errors.Is(err, tt.wantErr) || key != tt.want {
				t.Fatalf("Key = %q, %v; want %q, %v", key, err, tt.want, tt.wantErr)
			}
			if err == nil {
				return
			}
			if !strings.Contains(err.Error(), id) {
				t.Errorf("error %q does not name the secret", err)
			}
			// The error must not leak the value (nor its distinctive middle part).
			// "geo_" alone is the documented prefix and may be named.
			if v := strings.TrimSpace(tt.value); len(v) > len(secretkey.KeyPrefix) && strings.Contains(err.Error(), v) {
				t.Errorf("error %q leaks the secret value", err)
			}
			if strings.Contains(tt.value, "test_fake") && strings.Contains(err.Error(), "test_fake") {
				t.Errorf("error %q leaks part of the secret value", err)
			}
		})
	}
}

func TestStatic(t *testing.T) {
	ctx := context.Background()
	p := secretkey.Static(oldKey)
	if key, err := p.Key(ctx); err != nil || key != oldKey {
		t.Errorf("Key = %q, %v", key, err)
	}
	if key, err := p.Refresh(ctx); err != nil || key != oldKey {
		t.Errorf("Refresh = %q, %v", key, err)
	}
	_, err := secretkey.Static("not_a_geo_key_value").Key(ctx)
	if !errors.Is(err, secretkey.ErrKeyFormat) || strings.Contains(err.Error(), "not_a_geo_key_value") {
		t.Errorf("Static with a bad key: err = %v, want ErrKeyFormat without the value", err)
	}
}

func TestNewSecretsManagerValidates(t *testing.T) {
	fake := secretkeytest.New("x", oldKey)
	if _, err := secretkey.NewSecretsManager(fake, ""); err == nil {
		t.Error("accepted an empty secret id")
	}
	if _, err := secretkey.NewSecretsManager(nil, "x"); err == nil {
		t.Error("accepted a nil client")
	}
	if _, err := secretkey.NewSecretsManager(fake, "x", func(o *secretkey.SecretsManagerOptions) { o.TTL = -time.Second }); err == nil {
		t.Error("accepted a negative TTL")
	}
}

func TestFromSettings(t *testing.T) {
	calls := 0
	newClient := func() (secretkey.SecretsManagerAPI, error) {
		calls++
		return nil, errors.New("no AWS here")
	}
	p, err := secretkey.FromSettings("", "geo_test_fake_key_1", newClient)
	if err != nil || calls != 0 {
		t.Fatalf("local key: err = %v, AWS client built %d times", err, calls)
	}
	if k, _ := p.Key(context.Background()); k != "geo_test_fake_key_1" {
		t.Errorf("key = %q", k)
	}
	if _, err := secretkey.FromSettings("prod/geo-key", "", newClient); err == nil || calls != 1 {
		t.Errorf("secret id: err = %v, calls = %d; want the client error", err, calls)
	}
	if _, err := secretkey.FromSettings("", "", newClient); !errors.Is(err, secretkey.ErrNoKeySource) {
		t.Errorf("nothing set: err = %v", err)
	}
}
