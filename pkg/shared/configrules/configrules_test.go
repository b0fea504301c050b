package configrules

import (
	"strings"
	"testing"
	"time"
)

var testNames = Names{
	RatePerMinute: "ratePerMinute", MaxConcurrency: "maxConcurrency", BatchSize: "batchSize",
	FunctionTimeout: "predictorTimeoutSeconds", FinishReserve: "finishReserveSeconds", Pacing: "pacing",
	MemoryMB: "predictorMemoryMb", Oversize: "oversize", MaxReceiveCount: "dlqMaxReceiveCount",
	AccountConcurrency: "accountConcurrencyLimit",
}

// defaults are cdk.json's: a deployment that works.
func defaults() Settings {
	return Settings{
		RatePerMinute: 30, MaxConcurrency: 2, BatchSize: 5,
		FunctionTimeout: 120 * time.Second, FinishReserve: 10 * time.Second,
		Pacing: PacingShared, MemoryMB: 1024, Oversize: OversizeDownscale,
		MaxReceiveCount: 10, AccountConcurrency: DefaultAccountConcurrency,
	}
}

func TestDefaultsPass(t *testing.T) {
	if v := Check(defaults(), testNames); len(v) != 0 {
		t.Fatalf("cdk.json's defaults refused: %v", v)
	}
}

// Each refused configuration: exactly one violation, naming every key it
// involves and the limit, and the edge just inside passes.
func TestEachRefusedConfiguration(t *testing.T) {
	tests := []struct {
		name     string
		refused  func(*Settings)
		accepted func(*Settings) // the nearest configuration that works
		setting  Setting         // the violation's first setting
		mentions []string
	}{
		{
			name:     "a round of batches longer than the usable timeout",
			refused:  func(s *Settings) { s.MaxConcurrency = 20 }, // 20 x 5 x 2 s = 200 s > 105 s
			accepted: func(s *Settings) { s.MaxConcurrency = 10 }, // 100 s: the edge
			setting:  MaxConcurrency,
			mentions: []string{"maxConcurrency x batchSize x 60 / ratePerMinute", "200 s", "105 s", "maxConcurrency at most 10", "batchSize at most 2", "predictorTimeoutSeconds at least 215 s"},
		},
		{
			name:     "the same with instance pacing (each instance at rate/N: the same round)",
			refused:  func(s *Settings) { s.Pacing = "instance"; s.BatchSize = 10; s.MaxConcurrency = 6 }, // 120 s
			accepted: func(s *Settings) { s.Pacing = "instance"; s.BatchSize = 10; s.MaxConcurrency = 5 }, // 100 s
			setting:  MaxConcurrency,
			mentions: []string{"120 s", "105 s"},
		},
		{
			name:     "a finish reserve that leaves too little wait",
			refused:  func(s *Settings) { s.MaxConcurrency = 10; s.FinishReserve = 20 * time.Second }, // 100 s > 95 s
			accepted: func(s *Settings) { s.MaxConcurrency = 9; s.FinishReserve = 20 * time.Second },
			setting:  MaxConcurrency,
			mentions: []string{"finishReserveSeconds 20 s", "95 s"},
		},
		{
			name: "more first slots at an aimed rate than the model proved",
			refused: func(s *Settings) { // 41 x 4 = 164 slots; the round, 205 s, fits 885
				s.RatePerMinute, s.FunctionTimeout, s.MaxConcurrency = 60, 900*time.Second, 41
			},
			accepted: func(s *Settings) { s.RatePerMinute, s.FunctionTimeout, s.MaxConcurrency = 60, 900*time.Second, 40 },
			setting:  MaxConcurrency,
			mentions: []string{"maxConcurrency 41 at ratePerMinute 60", "164 slots", "above the 160", "maxConcurrency at most 40", "batchSize at most 3", "docs/benchmarks.md"},
		},
		{
			name:     "the same with one object a batch: an instance takes one slot at once",
			refused:  func(s *Settings) { s.BatchSize, s.FunctionTimeout, s.MaxConcurrency = 1, 900*time.Second, 161 },
			accepted: func(s *Settings) { s.BatchSize, s.FunctionTimeout, s.MaxConcurrency = 1, 900*time.Second, 160 },
			setting:  MaxConcurrency,
			mentions: []string{"161 slots", "maxConcurrency at most 160"},
		},
		{
			name:     "memory too small for downscaling",
			refused:  func(s *Settings) { s.MemoryMB = 128 },
			accepted: func(s *Settings) { s.MemoryMB = MinDownscaleMemoryMB },
			setting:  MemoryMB,
			mentions: []string{"predictorMemoryMb 128", "oversize downscale", "262 MB", "at least 328", "oversize reject"},
		},
		{
			name:     "dead-letter after fewer than five receives",
			refused:  func(s *Settings) { s.MaxReceiveCount = 1 },
			accepted: func(s *Settings) { s.MaxReceiveCount = 5 },
			setting:  MaxReceiveCount,
			mentions: []string{"dlqMaxReceiveCount 1", "at least 5"},
		},
		{
			name: "concurrency above what the account's default quota leaves one function",
			refused: func(s *Settings) {
				s.MaxConcurrency = 901
				s.BatchSize = 1
				s.RatePerMinute = 60000
				s.Pacing = "instance"
			},
			accepted: func(s *Settings) {
				s.MaxConcurrency = 900
				s.BatchSize = 1
				s.RatePerMinute = 60000
				s.Pacing = "instance"
			},
			setting:  MaxConcurrency,
			mentions: []string{"maxConcurrency 901", "900 concurrent executions", "accountConcurrencyLimit 1000"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := defaults()
			tt.refused(&s)
			v := Check(s, testNames)
			if len(v) != 1 {
				t.Fatalf("got %d violations, want 1: %v", len(v), v)
			}
			if v[0].Settings[0] != tt.setting {
				t.Errorf("first setting %d, want %d", v[0].Settings[0], tt.setting)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(v[0].Error(), m) {
					t.Errorf("message %q does not mention %q", v[0].Error(), m)
				}
			}
			ok := defaults()
			tt.accepted(&ok)
			if v := Check(ok, testNames); len(v) != 0 {
				t.Errorf("the nearest working configuration is refused too: %v", v)
			}
		})
	}
}

// The predictor knows fewer settings than the CDK app: an unknown one skips
// the rules that need it rather than refusing.
func TestUnknownSettingsSkipTheirRules(t *testing.T) {
	s := Settings{RatePerMinute: 30, MaxConcurrency: 900, Pacing: PacingShared, Oversize: OversizeDownscale}
	if v := Check(s, testNames); len(v) != 0 {
		t.Errorf("without a batch size, timeout, memory, receive count or quota nothing can be judged (not even the proven concurrency: the slots an instance takes at once are its batch's); got %v", v)
	}
}

func TestEveryViolationIsReported(t *testing.T) {
	s := defaults()
	s.MaxConcurrency, s.MemoryMB, s.MaxReceiveCount = 950, 256, 2
	if v := Check(s, testNames); len(v) != 5 {
		t.Errorf("got %d violations, want 5 (pacing, proven concurrency, memory, receives, account): %v", len(v), v)
	}
}

func TestMaxConcurrencyFor(t *testing.T) {
	for quota, want := range map[int]int{1000: 900, 3000: 2900, 200: 100, 150: 75, 10: 5} {
		if got := MaxConcurrencyFor(quota); got != want {
			t.Errorf("MaxConcurrencyFor(%d) = %d, want %d", quota, got, want)
		}
	}
}

func TestRoundOfSlots(t *testing.T) {
	if got := RoundOfSlots(30, 2, 5); got != 20*time.Second {
		t.Errorf("2 x 5 at 30/min = %v, want 20s", got)
	}
	if got := UsableWait(120*time.Second, 10*time.Second); got != 105*time.Second {
		t.Errorf("usable wait of 120 s with a 10 s reserve = %v, want 105s", got)
	}
}

// The bound follows the slots an instance takes at once, and applies only
// where the pacer aims, with shared pacing.
func TestMaxProvenConcurrency(t *testing.T) {
	for _, tt := range []struct {
		rate        float64
		batch, want int
	}{
		{30, 5, 40}, {60, 4, 40}, {60, 2, 80}, {1, 1, 160}, {30, 0, 40}, {61, 5, 0}, {30000, 1, 0},
	} {
		if got := MaxProvenConcurrency(tt.rate, tt.batch); got != tt.want {
			t.Errorf("MaxProvenConcurrency(%v, %d) = %d, want %d", tt.rate, tt.batch, got, tt.want)
		}
	}
	s := defaults()
	s.RatePerMinute, s.FunctionTimeout, s.MaxConcurrency, s.Pacing = 60, 900*time.Second, 100, "instance"
	if v := Check(s, testNames); len(v) != 0 {
		t.Errorf("instance pacing, which does not aim, refused: %v", v)
	}
}
