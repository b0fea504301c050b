package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
)

// ExternalService is a geolocation service a run calls instead of its
// built-in simulator: every prediction then spends the key's credits.
type ExternalService struct {
	URL string
	Key string // never printed or logged
}

// serviceCheckTimeout bounds the check that an external service answers,
// made before anything is uploaded.
const serviceCheckTimeout = 10 * time.Second

// service is the geolocation service the run talks to.
type service struct {
	url  string
	key  string         // never printed or logged
	sim  *geosim.Server // nil for an external service
	stop func()
	// keyHeader is the simulator's key header, which the functions are
	// configured with (GEO_API_KEY_HEADER) as a deployment would be; ""
	// for an external service (GEO_API_KEY_HEADER passes through).
	keyHeader string
	// backend: the simulator mirrors the public backend.
	backend bool
}

// startService starts the simulator on a free port of 127.0.0.1 unless
// opts.External names a service. The choice is the caller's alone, never
// the environment's: a GEO_API_URL left in a shell (the README's CLI
// section exports one) must not turn a demo into paid calls. An external
// service is checked first (its model list, the one call the contract
// allows without a key, so nothing is charged): a stale URL is one error
// line before anything is started or uploaded.
func startService(ctx context.Context, opts Options) (*service, error) {
	if ext := opts.External; ext != nil {
		if ext.URL == "" || ext.Key == "" {
			return nil, errors.New("an external service needs its URL and its key")
		}
		if err := checkServiceAnswers(ctx, ext.URL); err != nil {
			return nil, err
		}
		return &service{url: ext.URL, key: ext.Key, stop: func() {}}, nil
	}
	sim := geosim.New(geosim.WithProfile(opts.Profile))
	baseURL, stop, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the service simulator: %w", err)
	}
	header := geosim.KeyHeader
	if opts.Profile == geosim.ProfileBackend {
		header = geosim.BackendKeyHeader
	}
	return &service{url: baseURL, key: sim.DemoKey(), sim: sim, stop: stop, keyHeader: header,
		backend: opts.Profile == geosim.ProfileBackend}, nil
}

// checkServiceAnswers lists the service's public models, once, without a
// key. The error names the URL and the innermost cause (connection
// refused, no such host, a status) in one line.
func checkServiceAnswers(ctx context.Context, url string) error {
	client, err := geoapi.New(url, func(o *geoapi.Options) {
		o.MaxAttempts = 1
		o.AttemptTimeout = serviceCheckTimeout
	})
	if err != nil {
		return fmt.Errorf("the service URL %s: %w", url, err)
	}
	if _, err := client.Models(ctx, &geoapi.ModelsInput{Anonymous: true}); err != nil {
		return fmt.Errorf("the service at %s does not answer (%s): nothing uploaded", url, innermost(err))
	}
	return nil
}

// innermost is the deepest error of err's chain (of its first branch): the
// cause without the layers that repeat the URL and the operation.
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// describe names the service for progress lines.
func (s *service) describe() string {
	if s.sim != nil && s.backend {
		return "simulator at " + s.url + " (backend profile: keys refused off predict, " + s.keyHeader + ", 30 predictions a minute)"
	}
	if s.sim != nil {
		return "simulator at " + s.url
	}
	return "REAL service at " + s.url + ": every photo is a paid prediction on its key's credits"
}
