package secretkey

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-secretsmanager-caching-go/v2/secretcache"
)

// SecretsManagerAPI is the part of *secretsmanager.Client the cache calls:
// DescribeSecret to learn which version is AWSCURRENT, GetSecretValue to
// read it.
type SecretsManagerAPI interface {
	GetSecretValue(ctx context.Context, params *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
	DescribeSecret(ctx context.Context, params *secretsmanager.DescribeSecretInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.DescribeSecretOutput, error)
}

// SecretsManagerOptions configure NewSecretsManager.
type SecretsManagerOptions struct {
	// TTL is how long a read key is trusted before Key checks for a new
	// version (the cache refreshes after a random time between TTL/2 and
	// TTL). Default 5 minutes.
	TTL time.Duration
	// MinRefreshInterval rate-limits Refresh: within it, Refresh returns the
	// key it last read instead of calling Secrets Manager, so a storm of 401s
	// does not hammer the API. Default 5 seconds.
	MinRefreshInterval time.Duration
	// Clock returns the current time; tests replace it. Default time.Now.
	Clock func() time.Time
}

// SecretsManagerProvider reads the key from Secrets Manager through the AWS
// secret cache, which lives as long as the Lambda execution environment.
type SecretsManagerProvider struct {
	client   SecretsManagerAPI
	secretID string
	opts     SecretsManagerOptions

	mu          sync.Mutex // guards cache and lastRefresh; serialises Refresh
	cache       *secretcache.Cache
	lastRefresh time.Time
}

var _ Provider = (*SecretsManagerProvider)(nil)

// NewSecretsManager returns a Provider of the key in secretID (name or ARN).
// Nothing is read until the first Key.
func NewSecretsManager(client SecretsManagerAPI, secretID string, optFns ...func(*SecretsManagerOptions)) (*SecretsManagerProvider, error) {
	if client == nil {
		return nil, errors.New("secretkey: nil Secrets Manager client")
	}
	if secretID == "" {
		return nil, errors.New("secretkey: empty secret id")
	}
	opts := SecretsManagerOptions{TTL: 5 * time.Minute, MinRefreshInterval: 5 * time.Second, Clock: time.Now}
	for _, fn := range optFns {
		fn(&opts)
	}
	if opts.TTL <= 0 {
		return nil, fmt.Errorf("secretkey: TTL must be positive, got %s", opts.TTL)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	p := &SecretsManagerProvider{client: client, secretID: secretID, opts: opts}
	cache, err := p.newCache()
	if err != nil {
		return nil, err
	}
	p.cache = cache
	return p, nil
}

func (p *SecretsManagerProvider) newCache() (*secretcache.Cache, error) {
	cache, err := secretcache.New(func(c *secretcache.Cache) {
		c.Client = cacheClient{p.client}
		c.CacheItemTTL = p.opts.TTL.Nanoseconds()
		c.MaxCacheSize = 1
	})
	if err != nil {
		return nil, fmt.Errorf("secretkey: create secret cache: %w", err)
	}
	return cache, nil
}

// Key returns the cached key, reading Secrets Manager when the cache is
// empty or its TTL has passed.
func (p *SecretsManagerProvider) Key(ctx context.Context) (string, error) {
	p.mu.Lock()
	cache := p.cache
	p.mu.Unlock()
	return p.read(ctx, cache)
}

// Refresh reads the AWSCURRENT version afresh, bypassing the cache, and
// makes it the cached key. Calls within MinRefreshInterval of the last
// refresh return the cached key without calling Secrets Manager;
// concurrent calls wait for one read. If the read fails, the old cache is
// kept.
func (p *SecretsManagerProvider) Refresh(ctx context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.opts.Clock()
	if !p.lastRefresh.IsZero() && now.Sub(p.lastRefresh) < p.opts.MinRefreshInterval {
		return p.read(ctx, p.cache)
	}
	p.lastRefresh = now
	fresh, err := p.newCache()
	if err != nil {
		return "", err
	}
	key, err := p.read(ctx, fresh)
	if err != nil {
		return "", err
	}
	p.cache = fresh
	return key, nil
}

func (p *SecretsManagerProvider) read(ctx context.Context, cache *secretcache.Cache) (string, error) {
	value, err := cache.GetSecretStringWithContext(ctx, p.secretID)
	if err != nil {
		return "", fmt.Errorf("read secret %s: %w", p.secretID, err)
	}
	key, err := Parse(value)
	if err != nil {
		return "", fmt.Errorf("secret %s: %w", p.secretID, err)
	}
	return key, nil
}

// cacheClient adapts SecretsManagerAPI to the client interface of
// secretcache, which also lists calls the cache never makes.
type cacheClient struct{ SecretsManagerAPI }

var errNotUsed = errors.New("secretkey: call not used by the secret cache")

func (cacheClient) CreateSecret(context.Context, *secretsmanager.CreateSecretInput, ...func(*secretsmanager.Options)) (*secretsmanager.CreateSecretOutput, error) {
	return nil, errNotUsed
}

func (cacheClient) DeleteSecret(context.Context, *secretsmanager.DeleteSecretInput, ...func(*secretsmanager.Options)) (*secretsmanager.DeleteSecretOutput, error) {
	return nil, errNotUsed
}

func (cacheClient) ListSecrets(context.Context, *secretsmanager.ListSecretsInput, ...func(*secretsmanager.Options)) (*secretsmanager.ListSecretsOutput, error) {
	return nil, errNotUsed
}

func (cacheClient) UpdateSecret(context.Context, *secretsmanager.UpdateSecretInput, ...func(*secretsmanager.Options)) (*secretsmanager.UpdateSecretOutput, error) {
	return nil, errNotUsed
}
