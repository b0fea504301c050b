package pipeline

import (
	"errors"
	"fmt"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// service is the geolocation service the run talks to.
type service struct {
	url  string
	key  string         // never printed or logged
	sim  *geosim.Server // nil for the real service
	stop func()
	// keyHeader is the simulator's key header, which the functions are
	// configured with (GEO_API_KEY_HEADER) as a deployment would be; ""
	// for the real service (GEO_API_KEY_HEADER passes through).
	keyHeader string
	// backend: the simulator mirrors the public backend.
	backend bool
}

// startService uses the real service when both GEO_API_URL and GEO_API_KEY
// are set, and otherwise starts the simulator on a free port of 127.0.0.1.
func startService(getenv func(string) string, profile geosim.Profile) (*service, error) {
	if err := checkServiceEnv(getenv); err != nil {
		return nil, err
	}
	if url, key := getenv(envvars.APIURL), getenv(envvars.APIKey); url != "" {
		return &service{url: url, key: key, stop: func() {}}, nil
	}
	sim := geosim.New(geosim.WithProfile(profile))
	baseURL, stop, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the service simulator: %w", err)
	}
	header := geosim.KeyHeader
	if profile == geosim.ProfileBackend {
		header = geosim.BackendKeyHeader
	}
	return &service{url: baseURL, key: sim.DemoKey(), sim: sim, stop: stop, keyHeader: header,
		backend: profile == geosim.ProfileBackend}, nil
}

// checkServiceEnv refuses half a configuration before anything starts:
// both GEO_API_URL and GEO_API_KEY (the real service) or neither (the
// simulator).
func checkServiceEnv(getenv func(string) string) error {
	if (getenv(envvars.APIURL) == "") != (getenv(envvars.APIKey) == "") {
		return errors.New("set both " + envvars.APIURL + " and " + envvars.APIKey +
			" to use the real service, or neither to use the simulator")
	}
	return nil
}

// describe names the service for progress lines.
func (s *service) describe() string {
	if s.sim != nil && s.backend {
		return "simulator at " + s.url + " (backend profile: keys refused off predict, " + s.keyHeader + ", 30 predictions a minute)"
	}
	if s.sim != nil {
		return "simulator at " + s.url
	}
	return "real service at " + s.url
}
