package localpipeline

import (
	"errors"
	"fmt"

	"github.com/geolocate-aws/geolocate/pkg/envvars"
	"github.com/geolocate-aws/geolocate/pkg/geosim"
)

// service is the geolocation service the run talks to.
type service struct {
	url  string
	key  string         // never printed or logged
	sim  *geosim.Server // nil for the real service
	stop func()
}

// startService uses the real service when both GEO_API_URL and GEO_API_KEY
// are set, and otherwise starts the simulator on a free port of 127.0.0.1.
func startService(getenv func(string) string) (*service, error) {
	url, key := getenv(envvars.APIURL), getenv(envvars.APIKey)
	switch {
	case url != "" && key != "":
		return &service{url: url, key: key, stop: func() {}}, nil
	case url != "" || key != "":
		return nil, errors.New("set both " + envvars.APIURL + " and " + envvars.APIKey +
			" to use the real service, or neither to use the simulator")
	}
	sim := geosim.New()
	baseURL, stop, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the service simulator: %w", err)
	}
	return &service{url: baseURL, key: sim.DemoKey(), sim: sim, stop: stop}, nil
}

// describe names the service for progress lines.
func (s *service) describe() string {
	if s.sim != nil {
		return "simulator at " + s.url
	}
	return "real service at " + s.url
}
