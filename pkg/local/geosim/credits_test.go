package geosim

import (
	"net/http"
	"net/url"
	"testing"
)

func TestChargeSubscriptionThenTopUp(t *testing.T) {
	sim, base := newTestServer(t, func(c *Config) { c.Allowance = 4; c.TopUp = 2 })
	hiAcc := url.Values{"model_id": {ModelHighAccuracy}} // 3 credits
	steps := []struct {
		status            int
		subUsed, topUp    int
		available, charge int
	}{
		{200, 3, 2, 3, 3}, // subscription pays all
		{200, 4, 0, 0, 6}, // 1 from subscription, 2 from top-up
		{402, 4, 0, 0, 6}, // nothing left: nothing charged
	}
	for i, st := range steps {
		resp := predict(t, base, testKey, hiAcc, testJPEG(t, i))
		if resp.status != st.status {
			t.Fatalf("step %d: status %d, want %d: %s", i, resp.status, st.status, resp.body)
		}
		b, _ := sim.Balance(DefaultOrg)
		if b.SubscriptionUsed != st.subUsed || b.TopUp != st.topUp || b.Available != st.available || sim.Charged(DefaultOrg) != st.charge {
			t.Errorf("step %d: balance %+v charged %d, want used %d top-up %d available %d charged %d",
				i, b, sim.Charged(DefaultOrg), st.subUsed, st.topUp, st.available, st.charge)
		}
	}
	if err := sim.TopUp(DefaultOrg, 3); err != nil {
		t.Fatal(err)
	}
	if resp := predict(t, base, testKey, hiAcc, testJPEG(t, 9)); resp.status != 200 {
		t.Errorf("after top-up: status %d", resp.status)
	}
	if err := sim.TopUp("nobody", 1); err == nil {
		t.Error("TopUp of an unknown organisation succeeded")
	}
}

func TestOutOfCreditsWhenCostExceedsBalance(t *testing.T) {
	sim, base := newTestServer(t, func(c *Config) { c.Allowance = 2 })
	resp := predict(t, base, testKey, url.Values{"model_id": {ModelHighAccuracy}}, testJPEG(t, 1))
	if resp.status != http.StatusPaymentRequired || resp.json(t)["message_code"] != CodeOutOfCredits {
		t.Fatalf("status %d body %s, want 402", resp.status, resp.body)
	}
	if b, _ := sim.Balance(DefaultOrg); b.Available != 2 {
		t.Errorf("available %d after a 402, want 2 (nothing charged)", b.Available)
	}
	// The cheaper default model still fits.
	if resp := predict(t, base, testKey, nil, testJPEG(t, 1)); resp.status != 200 {
		t.Errorf("global model: status %d", resp.status)
	}
}

func TestNoCreditsAccount(t *testing.T) {
	_, base := newTestServer(t, func(c *Config) { c.NoCredits = true })
	if resp := predict(t, base, testKey, nil, testJPEG(t, 1)); resp.status != http.StatusPaymentRequired {
		t.Errorf("status %d, want 402", resp.status)
	}
}

func TestCreditsSummaryLayouts(t *testing.T) {
	tests := []struct {
		layout CreditsLayout
		path   []any
		want   float64
	}{
		{CreditsLayoutDetailed, []any{"data", "subscription", "allowance"}, 10},
		{CreditsLayoutDetailed, []any{"data", "subscription", "used"}, 3},
		{CreditsLayoutDetailed, []any{"data", "subscription", "remaining"}, 7},
		{CreditsLayoutDetailed, []any{"data", "topups", "balance"}, 5},
		{CreditsLayoutDetailed, []any{"data", "summary", "total_available"}, 12},
		{CreditsLayoutFlat, []any{"data", "credits_remaining"}, 12},
		{CreditsLayoutFlat, []any{"data", "credits_used"}, 3},
		{CreditsLayoutFlat, []any{"data", "credits_total"}, 15},
		{CreditsLayoutUnrecognised, []any{"result", "quota", "left_units"}, 12},
	}
	for _, tt := range tests {
		t.Run(tt.path[len(tt.path)-1].(string), func(t *testing.T) {
			sim, base := newTestServer(t, func(c *Config) { c.Allowance = 10; c.TopUp = 5 })
			if resp := predict(t, base, testKey, url.Values{"model_id": {ModelHighAccuracy}}, testJPEG(t, 1)); resp.status != 200 {
				t.Fatalf("predict status %d", resp.status)
			}
			sim.SetCreditsLayout(tt.layout)
			resp := get(t, base, PathCredits, testKey)
			if resp.status != http.StatusOK {
				t.Fatalf("status %d", resp.status)
			}
			if got := dig(t, resp.json(t), tt.path...); got != tt.want {
				t.Errorf("%v = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}
