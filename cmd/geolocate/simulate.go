package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// The simulate command's key: the README exports it as it is.
const (
	simulatorKeyPrefix = geosim.KeyPrefix + "sim_"
	simulatorDemoKey   = simulatorKeyPrefix + "demo"
)

// plural is "1 credit", "2 credits".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

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
		key       = fs.String("key", simulatorDemoKey, "the demo account's API key; must start with "+simulatorKeyPrefix+" so it can never pass for a real one")
	)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *credits < 0 || *perMinute < 0 || *latency < 0 {
		return usageError{fmt.Errorf("--credits, --rate-per-minute and --latency must not be negative")}
	}
	if !strings.HasPrefix(*key, simulatorKeyPrefix) || len(*key) == len(simulatorKeyPrefix) {
		return usageError{fmt.Errorf("--key %q: a simulator key starts with %s and goes on", *key, simulatorKeyPrefix)}
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
			cfg.DemoKey = *key
		},
	)
	ready := func(baseURL string) {
		fmt.Fprintf(c.stdout, "geolocation service simulator listening (Ctrl-C to stop)\n")
		fmt.Fprintf(c.stdout, "export %s=%s\n", envvars.APIURL, baseURL)
		// A simulator key: fake by construction (geo_sim_), and the same
		// every time, so the README's export line can be pasted as it is.
		fmt.Fprintf(c.stdout, "export %s=%s\n", envvars.APIKey, sim.DemoKey())
		if simProfile == geosim.ProfileBackend {
			fmt.Fprintf(c.stdout, "export %s=%s\n", envvars.APIKeyHeader, geosim.BackendKeyHeader)
		}
	}
	start := time.Now()
	if err := sim.ListenAndServe(ctx, *addr, ready); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "stopped after %s, %s, %s charged\n",
		time.Since(start).Round(time.Second), plural(sim.CallCount(), "call"), plural(sim.Charged(geosim.DefaultOrg), "credit"))
	return nil
}
