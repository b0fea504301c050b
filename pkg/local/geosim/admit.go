package geosim

import (
	"net/http"
	"time"
)

// admit runs the checks every endpoint shares: the key (required unless
// keyOptional), a rate-limit storm, then the account's rate limit. It
// answers the request itself and reports false when the call stops here.
// A missing key with keyOptional gives (nil, true).
func (s *Server) admit(w http.ResponseWriter, r *http.Request, call *Call, plan faultPlan, keyOptional bool) (*apiKey, bool) {
	value := r.Header.Get(KeyHeader)
	var key *apiKey
	switch {
	case value == "" && keyOptional:
	case value == "":
		s.reject(w, r, call, http.StatusUnauthorized, errorBody{MessageCode: CodeUnauthorized, Message: "missing " + KeyHeader + " header"})
		return nil, false
	default:
		s.mu.Lock()
		k, ok := s.lookupKeyLocked(value)
		s.mu.Unlock()
		if !ok {
			// Never echo the key: it may be a real one sent to the wrong host.
			s.reject(w, r, call, http.StatusUnauthorized, errorBody{MessageCode: CodeUnauthorized, Message: "invalid API key"})
			return nil, false
		}
		key = k
		call.KeyID, call.KeyName, call.Org = k.id, k.name, k.org
	}
	if plan.storm > 0 {
		call.Fault = FaultStorm
		s.rejectRateLimited(w, r, call, plan.storm)
		return nil, false
	}
	if key != nil {
		if delay := s.throttle(key.org); delay > 0 {
			s.rejectRateLimited(w, r, call, delay)
			return nil, false
		}
	}
	return key, true
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
		writeServerError(w, plan.serverError)
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
	if status == http.StatusServiceUnavailable {
		// A refusal before any work (a model that is down): say when to
		// come back, which tells the client nothing was charged.
		setRetryAfter(w, serverErrorRetryAfter)
	}
	writeJSON(w, status, body)
}

func (s *Server) rejectRateLimited(w http.ResponseWriter, r *http.Request, call *Call, delay time.Duration) {
	call.Status = http.StatusTooManyRequests
	s.drainBody(r)
	writeRateLimited(w, delay)
}
