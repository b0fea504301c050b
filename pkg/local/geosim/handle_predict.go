package geosim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/google/uuid"
)

// successEnvelope is the contract's prediction envelope.
type successEnvelope struct {
	MessageCode string      `json:"message_code"`
	Data        predictData `json:"data"`
}

type predictData struct {
	Prediction      any    `json:"prediction"`
	PredictionID    string `json:"prediction_id"`
	ModelID         string `json:"model_id"`
	CreditsConsumed int    `json:"credits_consumed"`
}

// handlePredict serves POST /v1/prediction/predict. The checks run in the
// order a client can act on: key, rate limit, query, model, upload, then
// the (simulated) prediction, and credits are settled last.
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

	q := r.URL.Query()
	topN, bad := parseTopN(q.Get("top_n"), q.Has("top_n"))
	if bad != nil {
		s.reject(w, r, &call, http.StatusUnprocessableEntity, *bad)
		return
	}
	call.TopN = topN
	call.ModelRequested = q.Get("model_id")
	model, status, bad := s.resolveModel(call.ModelRequested, key.org)
	if bad != nil {
		s.reject(w, r, &call, status, *bad)
		return
	}

	up, err := readUpload(r, s.cfg.MaxImageBytes, s.cfg.KeepFiles)
	call.BytesReceived, call.FileSHA256, call.File = up.size, up.sha256, up.file
	switch {
	case errors.Is(err, errTooLarge):
		s.reject(w, r, &call, http.StatusRequestEntityTooLarge, errorBody{MessageCode: CodeTooLarge,
			Message: fmt.Sprintf("image exceeds the limit of %d bytes", s.cfg.MaxImageBytes)})
		return
	case errors.Is(err, errNoFile):
		s.reject(w, r, &call, http.StatusUnprocessableEntity, errorBody{MessageCode: CodeValidation,
			Message: "form field file is required",
			Detail:  []fieldDetail{{Loc: []string{"body", "file"}, Msg: "Field required", Type: "missing"}}})
		return
	case err != nil:
		s.reject(w, r, &call, http.StatusBadRequest, errorBody{MessageCode: CodeValidation, Message: "malformed multipart body"})
		return
	case up.format == "":
		// 415 rather than 422: the request is well formed, the media type
		// is what the service cannot handle. The contract does not say.
		s.reject(w, r, &call, http.StatusUnsupportedMediaType, errorBody{MessageCode: CodeUnsupportedMedia,
			Message: "file is not a supported image (JPEG, PNG, WebP, HEIC/HEIF/AVIF, GIF, TIFF, BMP)"})
		return
	}

	if !s.injectTransportFaults(w, r, &call, plan, s.cfg.Latency) {
		return
	}

	body := marshal(successEnvelope{MessageCode: CodeSuccess, Data: predictData{
		Prediction:      predictionFor(model.Type, up.sha256, topN),
		PredictionID:    uuid.NewString(),
		ModelID:         model.ID,
		CreditsConsumed: model.Type.Cost(),
	}})
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
		call.Status = http.StatusPaymentRequired
		writeError(w, http.StatusPaymentRequired, CodeOutOfCredits,
			fmt.Sprintf("not enough credits: model %s costs %d", model.ID, model.Type.Cost()))
		return
	}
	call.ModelRun = model.ID
	switch {
	case plan.dropAfterCharge:
		call.Fault, call.Status = FaultDropAfterCharge, StatusDropped
		dropConnection(w)
	case plan.gatewayAfterCharge != 0:
		call.Fault, call.Status = FaultGatewayAfterCharge, plan.gatewayAfterCharge
		writeServerError(w, plan.gatewayAfterCharge)
	case plan.malformed:
		call.Fault, call.Status = FaultMalformed, http.StatusOK
		writeRaw(w, http.StatusOK, "application/json", body[:len(body)/2])
	default:
		call.Status = http.StatusOK
		writeRaw(w, http.StatusOK, "application/json", body)
	}
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
	return 0, &errorBody{
		MessageCode: CodeValidation,
		Message:     fmt.Sprintf("top_n must be an integer from %d to %d", MinTopN, MaxTopN),
		Detail:      []fieldDetail{{Loc: []string{"query", "top_n"}, Msg: msg}},
	}
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
	if i < 0 || s.models[i].Retired {
		// The contract: an id absent from the model list is retired, 422,
		// and the response names the model.
		return Model{}, http.StatusUnprocessableEntity, &errorBody{MessageCode: CodeModelRetired,
			Message: fmt.Sprintf("model %s is retired", id), ModelID: id}
	}
	m := s.models[i]
	if !s.visibleLocked(m, org) {
		// 422, not 403: the model is absent from this organisation's list,
		// and the contract rejects ids absent from the list with 422.
		return Model{}, http.StatusUnprocessableEntity, &errorBody{MessageCode: CodeModelNotGranted,
			Message: fmt.Sprintf("model %s is not available to this organisation", id), ModelID: id}
	}
	if m.Status == StatusDown {
		// The contract does not say what a down model does; we assume the
		// service refuses the call (503, nothing charged) rather than queue
		// it. "unknown" serves normally.
		return Model{}, http.StatusServiceUnavailable, &errorBody{MessageCode: CodeModelDown,
			Message: fmt.Sprintf("model %s is down", id), ModelID: id}
	}
	return m, 0, nil
}

type settleOutcome int

const (
	settleOK settleOutcome = iota
	settleClientGone
	settleNoCredits
)

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
