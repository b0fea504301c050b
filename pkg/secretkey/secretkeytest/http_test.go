package secretkeytest_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"

	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/secretkey/secretkeytest"
)

// TestServedOverHTTP runs the real SDK client and the real cached provider
// against the fake's HTTP face: reads, a rotation, an unknown secret.
func TestServedOverHTTP(t *testing.T) {
	fake := secretkeytest.New("geolocate/key", "geo_test_fake_key_1")
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	client := secretsmanager.NewFromConfig(aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDFAKEFAKEFAKE", "fake-secret", ""),
		BaseEndpoint: aws.String(srv.URL),
	})
	ctx := context.Background()
	keys, err := secretkey.NewSecretsManager(client, "geolocate/key", func(o *secretkey.SecretsManagerOptions) {
		o.MinRefreshInterval = time.Nanosecond
	})
	if err != nil {
		t.Fatal(err)
	}
	if k, err := keys.Key(ctx); err != nil || k != "geo_test_fake_key_1" {
		t.Fatalf("Key: %q, %v", k, err)
	}
	fake.Rotate("geo_test_fake_key_2")
	time.Sleep(time.Millisecond)
	if k, err := keys.Refresh(ctx); err != nil || k != "geo_test_fake_key_2" {
		t.Fatalf("Refresh after a rotation: %q, %v", k, err)
	}

	_, err = client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("other")})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "ResourceNotFoundException" {
		t.Errorf("unknown secret: %v; want ResourceNotFoundException", err)
	}
	if fake.Calls() < 3 {
		t.Errorf("%d calls reached the fake", fake.Calls())
	}
}
