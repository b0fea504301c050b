package geosim

import "net/http"

// CreditsLayout selects the body layout of the credit summary, which the
// contract does not show.
type CreditsLayout int

// Credit summary layouts.
const (
	// CreditsLayoutDetailed (default):
	// {"message_code":"success","data":{"subscription":{"allowance":A,"used":U,"remaining":R},
	//  "topups":{"balance":T},"summary":{"total_available":R+T}}}
	CreditsLayoutDetailed CreditsLayout = iota
	// CreditsLayoutFlat: {"message_code":"success","data":{"credits_remaining":R+T,
	//  "credits_used":U,"credits_total":A+T}}
	CreditsLayoutFlat
	// CreditsLayoutUnrecognised hides the figure where no client would look:
	// {"status":"ok","result":{"quota":{"left_units":R+T,"spent_units":U}}}
	CreditsLayoutUnrecognised
)

// SetCreditsLayout changes the credit summary layout.
func (s *Server) SetCreditsLayout(l CreditsLayout) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.creditsLayout = l
}

// successCode is the success envelope's code: the contract's "success",
// the backend's "SUCCESS".
func (s *Server) successCode() string {
	if s.cfg.backend() {
		return CodeSuccessBackend
	}
	return CodeSuccess
}

// handleCredits serves GET /v1/credits/summary for the key's account.
func (s *Server) handleCredits(w http.ResponseWriter, r *http.Request) {
	call := Call{Time: s.cfg.Now(), Endpoint: PathCredits}
	cw := s.trackCall(w, &call)
	defer cw.commit()
	w = cw
	plan := s.planFaults(PathCredits)
	key, ok := s.admit(w, r, &call, plan, false)
	if !ok || !s.injectTransportFaults(w, r, &call, plan, 0) {
		return
	}
	s.mu.Lock()
	b := s.accountLocked(key.org).balance()
	layout := s.creditsLayout
	s.mu.Unlock()

	call.Status = http.StatusOK
	type obj = map[string]any
	switch layout {
	case CreditsLayoutFlat:
		writeJSON(w, http.StatusOK, obj{"message_code": s.successCode(), "data": obj{
			"credits_remaining": b.Available, "credits_used": b.SubscriptionUsed, "credits_total": b.Allowance + b.TopUp}})
	case CreditsLayoutUnrecognised:
		writeJSON(w, http.StatusOK, obj{"status": "ok", "result": obj{"quota": obj{
			"left_units": b.Available, "spent_units": b.SubscriptionUsed}}})
	default:
		writeJSON(w, http.StatusOK, obj{"message_code": s.successCode(), "data": obj{
			"subscription": obj{"allowance": b.Allowance, "used": b.SubscriptionUsed, "remaining": b.SubscriptionRemaining},
			"topups":       obj{"balance": b.TopUp},
			"summary":      obj{"total_available": b.Available},
		}})
	}
}
