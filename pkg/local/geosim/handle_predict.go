package geosim

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// successEnvelope is the contract's prediction envelope; the backend adds
// a message.
type successEnvelope struct {
	MessageCode string      `json:"message_code"`
	Message     string      `json:"message,omitempty"`
	Data        predictData `json:"data"`
}

type predictData struct {
	Prediction      any    `json:"prediction"`
	PredictionID    string `json:"prediction_id"`
	ModelID         string `json:"model_id"`
	CreditsConsumed int    `json:"credits_consumed"`
}

// handlePredict serves POST /v1/prediction/predict. The checks run in the
// order the service runs them. ProfileContract: key, rate limit, query,
// model, upload, prediction. ProfileBackend, as its middleware, FastAPI
// and decorators do: key; the query and the form's file (FastAPI's
// validation); the rate limit; the credit pre-check; the file's type, then
// its size; the prediction. Credits are settled last in both.
func (s *Server) handlePredict(w http.ResponseWriter, r *http.Request) {
	call := Call{Time: s.cfg.Now(), Endpoint: PathPredict}
	cw := s.trackCall(w, &call)
	defer cw.commit()
	w = cw
	plan := s.planFaults(PathPredict)
	key, ok := s.admit(w, r, &call, plan, false)
	if !ok {
		return
	}
	backend := s.cfg.backend()

	q := r.URL.Query()
	topN, bad := parseTopN(q.Get("top_n"), q.Has("top_n"))
	if bad != nil {
		s.reject(w, r, &call, http.StatusUnprocessableEntity, *bad)
		return
	}
	call.TopN = topN
	call.ModelRequested = q.Get("model_id")
	model, status, bad := s.resolveModel(call.ModelRequested, key.org)
	if bad != nil && (!backend || status == http.StatusUnprocessableEntity) {
		s.reject(w, r, &call, status, *bad)
		return
	}

	up, err := readUpload(r, s.cfg.MaxImageBytes, s.cfg.KeepFiles)
	call.BytesReceived, call.FileSHA256, call.File = up.size, up.sha256, up.file
	switch {
	case errors.Is(err, errNoFile):
		s.reject(w, r, &call, http.StatusUnprocessableEntity, newError(CodeInvalidInput, "Invalid input provided",
			map[string]any{"description": "Request validation failed", "validation_errors": []validationError{
				{Type: "missing", Loc: []string{"body", "file"}, Msg: "Field required"}}}))
		return
	case err != nil && !errors.Is(err, errTooLarge):
		s.reject(w, r, &call, http.StatusBadRequest, newError(CodeInvalidInput, "malformed multipart body", nil))
		return
	}
	if backend {
		// Counted only now: the backend's limiter wraps the endpoint, which
		// FastAPI calls once the request is valid.
		if !s.limit(w, r, &call, key) {
			return
		}
		if !s.hasCredits(key.org, model.Type.Cost()) {
			s.rejectNoCredits(w, r, &call, model)
			return
		}
		if bad != nil { // a model that is down
			s.reject(w, r, &call, status, *bad)
			return
		}
	}
	switch {
	case !acceptedPartType(up.partType, up.filename):
		s.reject(w, r, &call, http.StatusBadRequest, newError(CodeInvalidFileType, "Invalid file type",
			map[string]any{"content_type": up.partType}))
		return
	case errors.Is(err, errTooLarge):
		s.reject(w, r, &call, http.StatusBadRequest, newError(CodeTooLarge, "File size too large",
			map[string]any{"max_bytes": s.cfg.MaxImageBytes}))
		return
	case up.format == "" && !backend:
		// The backend does not sniff: its model fails on such a file
		// (PREDICTION_FAILED, below); this profile refuses it up front.
		s.reject(w, r, &call, http.StatusBadRequest, newError(CodeInvalidFileType, "Invalid file type",
			map[string]any{"description": "file is not a supported image (JPEG, PNG, WebP, HEIC/HEIF/AVIF, GIF, TIFF, BMP)"}))
		return
	}

	if !s.injectTransportFaults(w, r, &call, plan, s.cfg.Latency) {
		return
	}
	if up.format == "" {
		call.Status = http.StatusInternalServerError
		s.writeServerError(w, http.StatusInternalServerError)
		return
	}

	env := successEnvelope{MessageCode: CodeSuccess, Data: predictData{
		Prediction:      predictionFor(model.Type, up.sha256, topN, backend, s.truthPull(up.sha256, model)),
		PredictionID:    uuid.NewString(),
		ModelID:         model.ID,
		CreditsConsumed: model.Type.Cost(),
	}}
	if backend {
		env.MessageCode, env.Message = CodeSuccessBackend, "Operation completed successfully"
	}
	body := marshal(env)
	// Only a malformed answer may be free; every other fault after this
	// point comes after the work was done.
	free := plan.malformed && plan.malformedFree && !plan.dropAfterCharge && plan.gatewayAfterCharge == 0
	charged, outcome := s.settle(r.Context(), key.org, model.Type.Cost(), !free)
	call.Charged = charged
	switch outcome {
	case settleClientGone:
		call.Status = StatusClientClosedRequest
		return
	case settleNoCredits:
		// The charge after the prediction failed (the backend answers 402
		// then too): nothing was taken.
		s.rejectNoCredits(w, r, &call, model)
		return
	}
	call.ModelRun = model.ID
	switch {
	case plan.dropAfterCharge:
		call.Fault, call.Status = FaultDropAfterCharge, StatusDropped
		dropConnection(w)
	case plan.gatewayAfterCharge != 0:
		call.Fault, call.Status = FaultGatewayAfterCharge, plan.gatewayAfterCharge
		s.writeServerError(w, plan.gatewayAfterCharge)
	case plan.malformed:
		call.Fault, call.Status = FaultMalformed, http.StatusOK
		writeRaw(w, http.StatusOK, "application/json", body[:len(body)/2])
	default:
		call.Status = http.StatusOK
		writeRaw(w, http.StatusOK, "application/json", body)
	}
}

// rejectNoCredits answers 402 with the credits the model needs.
func (s *Server) rejectNoCredits(w http.ResponseWriter, r *http.Request, call *Call, model Model) {
	s.reject(w, r, call, http.StatusPaymentRequired, newError(CodeOutOfCredits, "Insufficient credits",
		map[string]any{"credits_required": model.Type.Cost(), "model_id": model.ID}))
}

// acceptedPartType is the backend's rule for the file part: an image/*
// type or application/octet-stream, or a HEIC/HEIF file name whatever the
// type.
func acceptedPartType(partType, filename string) bool {
	mt, _, err := mime.ParseMediaType(partType)
	if err == nil && (strings.HasPrefix(mt, "image/") || mt == "application/octet-stream") {
		return true
	}
	name := strings.ToLower(filename)
	return strings.HasSuffix(name, ".heic") || strings.HasSuffix(name, ".heif")
}

// parseTopN validates the top_n query value (present: sent at all).
func parseTopN(raw string, present bool) (int, *errorBody) {
	if !present {
		return DefaultTopN, nil
	}
	n, err := strconv.Atoi(raw)
	if err == nil && n >= MinTopN && n <= MaxTopN {
		return n, nil
	}
	msg := fmt.Sprintf("Input should be between %d and %d", MinTopN, MaxTopN)
	if err != nil {
		msg = "Input should be a valid integer"
	}
	body := newError(CodeInvalidInput, "Invalid input provided", map[string]any{
		"description":       fmt.Sprintf("top_n must be an integer from %d to %d", MinTopN, MaxTopN),
		"validation_errors": []validationError{{Type: "int_range", Loc: []string{"query", "top_n"}, Msg: msg, Input: raw}},
	})
	return 0, &body
}

// resolveModel picks the model that runs for the requested id ("" means
// the default global model) and the caller's organisation.
func (s *Server) resolveModel(requested, org string) (Model, int, *errorBody) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := requested
	if id == "" {
		id = s.defaultModel
	}
	i := s.modelIndexLocked(id)
	m := Model{}
	if i >= 0 {
		m = s.models[i]
	}
	switch {
	case i < 0 || m.Retired, !s.visibleLocked(m, org):
		// The contract: an id absent from the model list (retired, or a
		// whitelist model not granted) is refused with 422 naming the
		// model; here as the backend's validation error at model_id.
		body := newError(CodeInvalidInput, "Invalid input provided", map[string]any{
			"description": fmt.Sprintf("model %s is not available: retired or not granted", id),
			"model_id":    id,
			"validation_errors": []validationError{{Type: "enum", Loc: []string{"query", "model_id"},
				Msg: "Input should be a model id from GET " + PathModels, Input: id}},
		})
		return Model{}, http.StatusUnprocessableEntity, &body
	case m.Status == StatusDown:
		// The contract does not say what a down model does; the simulator
		// refuses the call as the backend does when its inference server
		// is unreachable (503, nothing charged). "unknown" serves normally.
		body := newError(CodeExternalService, "External service error", map[string]any{
			"description": fmt.Sprintf("model %s is down", id), "model_id": id})
		return m, http.StatusServiceUnavailable, &body
	}
	return m, 0, nil
}

type settleOutcome int

const (
	settleOK settleOutcome = iota
	settleClientGone
	settleNoCredits
)

// hasCredits is the backend's credit pre-check.
func (s *Server) hasCredits(org string, cost int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accountLocked(org).available() >= cost
}

// settle charges org for a prediction about to be delivered. The request
// context is checked under the same lock as the charge: a client that gave
// up (timeout, disconnect) while the model ran is not charged, which is the
// assumption that lets tests prove no credit is spent twice. take=false
// checks the balance but charges nothing.
func (s *Server) settle(ctx context.Context, org string, cost int, take bool) (int, settleOutcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil {
		return 0, settleClientGone
	}
	a := s.accountLocked(org)
	if a.available() < cost {
		return 0, settleNoCredits
	}
	if !take {
		return 0, settleOK
	}
	a.charge(cost)
	return cost, settleOK
}
