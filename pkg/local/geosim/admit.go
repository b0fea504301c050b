package geosim

import (
	"net/http"
	"time"
)

// admit runs the checks every endpoint shares: the key (required unless
// keyOptional; refused off predict when KeysOnlyOnPredict), a rate-limit
// storm, then, in ProfileContract, the rate limit (every authenticated call
// counts, as the contract says; ProfileBackend counts valid predictions
// only, see handlePredict). It answers the request itself and reports
// false when the call stops here. A missing key with keyOptional gives
// (nil, true).
func (s *Server) admit(w http.ResponseWriter, r *http.Request, call *Call, plan faultPlan, keyOptional bool) (*apiKey, bool) {
	header := s.cfg.KeyHeader
	value := r.Header.Get(header)
	var key *apiKey
	switch {
	case value != "" && s.keysOnlyOnPredict.Load() && call.Endpoint != PathPredict:
		// The key is not even looked at: the endpoint refuses keys.
		s.reject(w, r, call, http.StatusUnauthorized, newError(CodeUnauthorized, "Authentication required",
			map[string]any{"description": keysNotAllowedHereWords}))
		return nil, false
	case value == "" && keyOptional:
	case value == "":
		s.reject(w, r, call, http.StatusUnauthorized, newError(CodeAuthRequired, "Authentication required",
			map[string]any{"description": "Provide the '" + header + "' header"}))
		return nil, false
	default:
		s.mu.Lock()
		k, ok := s.lookupKeyLocked(value)
		s.mu.Unlock()
		if !ok {
			// Never echo the key: it may be a real one sent to the wrong host.
			s.reject(w, r, call, http.StatusUnauthorized, newError(CodeInvalidKey, "Invalid or expired API key", nil))
			return nil, false
		}
		key = k
		call.KeyID, call.KeyName, call.Org = k.id, k.name, k.org
	}
	if plan.storm > 0 {
		call.Fault = FaultStorm
		s.rejectRateLimited(w, r, call, &refusal{delay: plan.storm, exact: true}, "storm", "fault")
		return nil, false
	}
	if key != nil && !s.cfg.backend() && !s.limit(w, r, call, key) {
		return nil, false
	}
	return key, true
}

// limit counts a call of key against the rate limit, or answers 429 and
// reports false.
func (s *Server) limit(w http.ResponseWriter, r *http.Request, call *Call, key *apiKey) bool {
	refused, rateKey, clientType := s.throttle(key)
	if refused == nil {
		return true
	}
	s.rejectRateLimited(w, r, call, refused, rateKey, clientType)
	return false
}

// injectTransportFaults applies latency, dropped connections and 5xx
// answers, then waits baseLatency, the model's processing time; it reports
// false when the call stops here. The faults strike before the model runs,
// so they never charge.
func (s *Server) injectTransportFaults(w http.ResponseWriter, r *http.Request, call *Call, plan faultPlan, baseLatency time.Duration) bool {
	if plan.latency > 0 {
		call.Fault = FaultLatency
	}
	if !sleep(r.Context(), plan.latency) {
		call.Status = StatusClientClosedRequest
		return false
	}
	if plan.drop {
		call.Fault, call.Status = FaultDrop, StatusDropped
		dropConnection(w)
		return false
	}
	if plan.serverError != 0 {
		call.Fault, call.Status = FaultServerError, plan.serverError
		s.writeServerError(w, plan.serverError)
		return false
	}
	if !sleep(r.Context(), baseLatency) {
		call.Status = StatusClientClosedRequest
		return false
	}
	return true
}

// reject drains what is left of the upload, so a client still sending reads
// the error rather than a reset connection, then answers with body.
func (s *Server) reject(w http.ResponseWriter, r *http.Request, call *Call, status int, body errorBody) {
	call.Status = status
	s.drainBody(r)
	writeJSON(w, status, body)
}

func (s *Server) rejectRateLimited(w http.ResponseWriter, r *http.Request, call *Call, refused *refusal, rateKey, clientType string) {
	call.Status = http.StatusTooManyRequests
	s.drainBody(r)
	writeRateLimited(w, refused, rateKey, clientType)
}
