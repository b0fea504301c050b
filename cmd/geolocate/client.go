package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/keyheader"
)

// connection flags shared by the subcommands that call the service.
type connection struct {
	secretID string
}

func (conn *connection) register(fs *flag.FlagSet) {
	fs.StringVar(&conn.secretID, "secret-id", "", "read the API key from this AWS Secrets Manager secret instead of "+envvars.APIKey)
}

// client builds a service client from GEO_API_URL and the key. With
// keyRequired false a missing key is allowed (the model list).
func (conn *connection) client(ctx context.Context, c *cli, keyRequired bool) (*geoapi.Client, error) {
	baseURL := strings.TrimSpace(c.getenv(envvars.APIURL))
	if baseURL == "" {
		return nil, fmt.Errorf("%s is not set: give the service base URL (for the simulator, see geolocate simulate)", envvars.APIURL)
	}
	key, err := conn.apiKey(ctx, c)
	if err != nil {
		return nil, err
	}
	if key == "" && keyRequired {
		return nil, fmt.Errorf("no API key: set %s or pass --secret-id", envvars.APIKey)
	}
	c.key = key
	header, err := keyHeaderFromEnv(c)
	if err != nil {
		return nil, err
	}
	client, err := geoapi.New(baseURL, func(o *geoapi.Options) { o.APIKey, o.KeyHeader = key, header })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envvars.APIURL, err)
	}
	return client, nil
}

// keyHeaderFromEnv is GEO_API_KEY_HEADER, checked as the functions check it;
// the contract's X-Service-Key when unset.
func keyHeaderFromEnv(c *cli) (string, error) {
	header := strings.TrimSpace(c.getenv(envvars.APIKeyHeader))
	if header == "" {
		return keyheader.Default, nil
	}
	if err := keyheader.Check(header); err != nil {
		return "", usageError{fmt.Errorf("%s: %w", envvars.APIKeyHeader, err)}
	}
	return header, nil
}

// describeUnauthorized words a 401 by what the service refused: the key
// (wrong, revoked, or not sent where the service reads it) or the
// endpoint, which takes no API keys at all.
func describeUnauthorized(e *geoapi.UnauthorizedError) error {
	switch e.Refusal() {
	case geoapi.KeyNotAcceptedHere:
		return apiError("this endpoint takes no API keys", &e.APIError,
			"the key was not judged; the service accepts keys only for predictions")
	case geoapi.KeyMissing:
		return apiError("the service received no key", &e.APIError,
			"it may read the key from another header: set "+envvars.APIKeyHeader+" (default "+keyheader.Default+") to the header the service documents")
	}
	return apiError("the service refused this key", &e.APIError, "check "+envvars.APIKey+" or --secret-id")
}

func (conn *connection) apiKey(ctx context.Context, c *cli) (string, error) {
	if conn.secretID == "" {
		return strings.TrimSpace(c.getenv(envvars.APIKey)), nil
	}
	raw, err := c.secrets.SecretString(ctx, conn.secretID)
	if err != nil {
		return "", fmt.Errorf("read secret %s: %w", conn.secretID, err)
	}
	key, err := secretkey.Parse(raw) // the same parsing the functions use
	if err != nil {
		return "", fmt.Errorf("secret %s: %w", conn.secretID, err)
	}
	return key, nil
}
