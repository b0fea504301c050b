package jobs

import (
	"fmt"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// Config is the job feeder function's configuration, from its environment
// (the stack writes the settings of settings.JobFeeder, the table, the
// queue and its visibility timeout).
type Config struct {
	TableName string
	QueueURL  string
	// Feeder holds the settings the feeder's options take.
	RatePerMinute   float64
	MaxConcurrency  int
	WindowMinutes   int
	DailyBudget     int
	MaxReceiveCount int
	Visibility      time.Duration
	LogLevel        string
}

// LoadConfig reads the feeder's configuration; every problem is reported
// at once.
func LoadConfig(getenv func(string) string) (Config, error) {
	r := settings.FromEnv(getenv)
	c := Config{
		TableName:       r.Required(envvars.TableName),
		QueueURL:        r.Required(envvars.QueueURL),
		RatePerMinute:   float64(r.Int(settings.RatePerMinute)),
		MaxConcurrency:  r.Int(settings.MaxConcurrency),
		WindowMinutes:   r.Int(settings.JobWindowMinutes),
		DailyBudget:     r.Int(settings.DailyCreditBudget),
		MaxReceiveCount: r.Int(settings.DLQMaxReceiveCount),
		Visibility:      r.DurationMin(envvars.QueueVisibility, DefaultVisibility, time.Second),
		LogLevel:        strings.ToLower(r.String(settings.LogLevel)),
	}
	if err := r.Err(); err != nil {
		return Config{}, fmt.Errorf("job feeder configuration: %w", err)
	}
	return c, nil
}

// Options are the FeederOptions c sets.
func (c Config) Options(o *FeederOptions) {
	o.RatePerMinute = c.RatePerMinute
	o.MaxConcurrency = c.MaxConcurrency
	o.WindowMinutes = c.WindowMinutes
	o.DailyBudget = c.DailyBudget
	if c.MaxReceiveCount > 0 {
		o.MaxReceiveCount = c.MaxReceiveCount
	}
	o.Visibility = c.Visibility
}
