package monitor

import (
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// TestCreditFiguresOutOfRangeAreRefused: a remaining figure that is not a
// JSON number within the documented range is refused, named in the run's
// reason with the value it held, never published, and never reaches the
// history (whose write DynamoDB would refuse past its number range: 1e308
// failed it on every run). A refused secondary figure leaves the rest of
// the summary readable.
func TestCreditFiguresOutOfRangeAreRefused(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	for _, tc := range []struct{ name, body, value string }{
		{"beyond DynamoDB's number range", `{"credits_remaining": 1e308}`, "1e308"},
		{"negative", `{"credits_remaining": -5}`, "-5"},
		{"a string", `{"credits_remaining": "1000"}`, `"1000"`},
		{"a padded string", `{"credits_remaining": "  42 "}`, `"  42 "`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			h := newHarness(t, startListService(t, &listService{models: func() []string { return []string{"global-v1"} }, credits: tc.body}),
				cfg, NewHistory(codeClient(client), table, "figures-"+strings.ReplaceAll(tc.name, " ", "-"), cfg.HistoryTTL))
			for run := range 2 {
				rep, pts := h.run(t)
				pts.wantAbsent(t, metricnames.CreditsRemaining, metricnames.CreditBurnPerDay, metricnames.CreditDaysRemaining)
				if len(rep.Reasons) != 1 || !strings.HasPrefix(rep.Reasons[0], "credits: ") {
					t.Fatalf("run %d: reasons %v, want one credits reason (never the history's)", run, rep.Reasons)
				}
				wantContains(t, "reason", rep.Reasons[0], "credits_remaining", tc.value)
			}
		})
	}
	t.Run("a secondary figure out of range", func(t *testing.T) {
		cfg := testConfig()
		h := newHarness(t, startListService(t, &listService{models: func() []string { return []string{"global-v1"} },
			credits: `{"credits_remaining": 500, "subscription": {"remaining": 1e308}, "topup": {"balance": -5}}`}),
			cfg, NewHistory(codeClient(client), table, "figures-secondary", cfg.HistoryTTL))
		rep, pts := h.run(t)
		if !rep.Healthy {
			t.Fatalf("unhealthy: %v", rep.Reasons)
		}
		pts.want(t, metricnames.CreditsRemaining, 500)
		pts.wantAbsent(t, metricnames.SubscriptionCredits, metricnames.TopUpCredits)
	})
}
