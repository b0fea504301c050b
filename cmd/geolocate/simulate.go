package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// runSimulate: geolocate simulate [--addr 127.0.0.1:8080] [--rate-per-minute N]
// [--latency D] [--credits N]. It serves until Ctrl-C or SIGTERM.
func runSimulate(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("simulate", "")
	var (
		addr      = fs.String("addr", "127.0.0.1:8080", "loopback address to listen on (port 0 picks a free one)")
		perMinute = fs.Float64("rate-per-minute", 0, "requests per minute allowed (0: unlimited; the backend profile's default is 30)")
		limiter   = fs.String("limiter", string(geosim.LimiterSlidingLog), "rate limiter: sliding-log (the service's: whole-second timestamps over a 60 s window) or token-bucket")
		burst     = fs.Int("burst", 1, "token bucket burst (--limiter token-bucket)")
		profile   = fs.String("profile", string(geosim.ProfileContract), "contract (the contract, with the public backend where it is silent) or backend (the backend in full: keys refused off predict, its key header "+geosim.BackendKeyHeader+")")
		latency   = fs.Duration("latency", 0, "processing time added to every prediction")
		credits   = fs.Int("credits", geosim.DefaultAllowance, "subscription allowance of the demo account")
		seed      = fs.Uint64("seed", 1, "seed of the fault injection random source")
	)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *credits < 0 || *perMinute < 0 || *latency < 0 {
		return usageError{fmt.Errorf("--credits, --rate-per-minute and --latency must not be negative")}
	}
	simProfile, err := geosim.ParseProfile(*profile)
	if err != nil {
		return usageError{fmt.Errorf("--profile: %w", err)}
	}
	kind, err := geosim.ParseLimiter(*limiter)
	if err != nil {
		return usageError{fmt.Errorf("--limiter: %w", err)}
	}
	limit := func(cfg *geosim.Config) {
		if flagGiven(fs, "rate-per-minute") || kind == geosim.LimiterTokenBucket {
			cfg.Limiter, cfg.RatePerMinute, cfg.RateBurst = kind, *perMinute, *burst
		}
	}
	sim := geosim.New(
		geosim.WithProfile(simProfile),
		limit,
		geosim.WithLatency(*latency),
		geosim.WithSeed(*seed),
		geosim.WithLogger(slog.New(slog.NewJSONHandler(c.stderr, nil))),
		func(cfg *geosim.Config) {
			cfg.Allowance = *credits
			cfg.NoCredits = *credits == 0
		},
	)
	ready := func(baseURL string) {
		fmt.Fprintf(c.stdout, "geolocation service simulator listening (Ctrl-C to stop)\n")
		fmt.Fprintf(c.stdout, "export %s=%s\n", envvars.APIURL, baseURL)
		// A simulator key, generated now: fake by construction (geo_sim_).
		fmt.Fprintf(c.stdout, "export %s=%s\n", envvars.APIKey, sim.DemoKey())
		if simProfile == geosim.ProfileBackend {
			fmt.Fprintf(c.stdout, "export %s=%s\n", envvars.APIKeyHeader, geosim.BackendKeyHeader)
		}
	}
	start := time.Now()
	if err := sim.ListenAndServe(ctx, *addr, ready); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "stopped after %s, %d calls, %d credits charged\n",
		time.Since(start).Round(time.Second), sim.CallCount(), sim.Charged(geosim.DefaultOrg))
	return nil
}
