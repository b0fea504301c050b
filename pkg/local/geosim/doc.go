// Package geosim is an in-process simulator of the image geolocation service,
// so the client, the Lambda functions and the local pipeline can be tested
// without spending real credits. It can inject faults (latency, 5xx, dropped
// connections, gateway errors after a charge, malformed bodies, rate-limit
// storms) from a seeded random source so runs are reproducible.
//
// A *Server is an http.Handler:
//
//	sim := geosim.New()
//	ts := httptest.NewServer(sim)
//	defer ts.Close()
//	key := sim.DemoKey()
//
// # The contract it follows
//
//   - POST /v1/prediction/predict: multipart/form-data with the image in the
//     form field "file" (JPEG, PNG, WebP, HEIC and others), at most 10 MB
//     (10,000,000 bytes); query top_n 1 to 15, default 5; query model_id,
//     default the current global model. The success envelope is
//     {"message_code":"success","data":{"prediction","prediction_id" (UUID),
//     "model_id","credits_consumed"}}. A global model returns result_type
//     "coordinates" with clusters, a high accuracy model result_type
//     "accuracy" with predictions and top_prediction.
//   - GET /v1/prediction/models: key optional; without one only public
//     models, with one also the whitelist models granted to its organisation.
//     Each model has a status: ready, down or unknown. An id absent from the
//     list is retired.
//   - GET /v1/credits/summary: the subscription allowance and top-up balance.
//   - The key travels in the X-Service-Key header (Config.KeyHeader) and
//     starts with "geo_".
//   - Credits per call: global 1, high accuracy 3, vehicle id 2, property 3;
//     credits_consumed reports the cost of the model that ran.
//   - Statuses: 401 missing or invalid key; 402 no credits left; 422 top_n out
//     of range, or a retired model_id (the response names the model); 429
//     rate limit exceeded.
//
// # What it does where the contract shows nothing
//
// Where the contract is silent the simulator behaves as the public backend
// of the service does (a FastAPI application with the same paths, geo_
// keys, model types and credit costs; docs/service-assumptions.md lists
// what it does and how the client handles both). Two profiles
// (Config.Profile, geolocate simulate --profile):
//
//   - ProfileContract (the default): the contract where it speaks (keys
//     accepted on every endpoint in X-Service-Key, success code "success",
//     10,000,000 bytes, every authenticated call rate-limited per account),
//     the backend everywhere else.
//   - ProfileBackend: the backend in full. Keys are refused on every
//     endpoint but predict (401 UNAUTHORIZED "API keys not allowed for this
//     endpoint"), so the credit summary cannot be read with a key and the
//     model list only anonymously; the key is read from BackendKeyHeader;
//     "SUCCESS" with a message; 10 MiB; 30 predictions per 60 s per key,
//     counted only once a request is valid; models listed as
//     {model_id, model_type, credits_per_use, access_level, status}.
//
// In both:
//
//   - Error bodies are {"message_code","message","details"} with the
//     backend's upper-case codes: AUTH_REQUIRED, INVALID_API_KEY or
//     UNAUTHORIZED (401); INSUFFICIENT_CREDITS (402, details.credits_required);
//     FILE_TOO_LARGE and INVALID_FILE_TYPE (400; a file part's type must be
//     image/* or application/octet-stream, or its name .heic/.heif);
//     INVALID_INPUT (422, details.validation_errors in FastAPI's shape) for
//     top_n and for a model_id absent from the caller's list (retired, or
//     a whitelist model not granted: the error is located at model_id and
//     names it); RATE_LIMIT_EXCEEDED (429); EXTERNAL_SERVICE_ERROR (503) for
//     a model that is down; PREDICTION_FAILED (500).
//   - The rate limiter is a sliding log of whole-second timestamps
//     (LimiterSlidingLog): entries at or below now-window are dropped, a
//     call is counted, a refused call is removed again. Its 429 carries
//     X-RateLimit-Limit, -Reset, -Retry-After and -Window in whole seconds,
//     no Retry-After, and details {limit, window_seconds, current_count,
//     retry_after, rate_key, client_type}; retry_after is window - (now -
//     oldest), or the whole window when that is 0. The token bucket is kept
//     as an option (WithRateLimit, LimiterTokenBucket): its 429 says the
//     exact delay in X-RateLimit-Retry-After and Retry-After.
//   - A coordinates result's clusters carry location.admin2 and points; the
//     backend profile returns one to five clusters whatever top_n says.
//     Vehicle and property results are the backend's: predictions of
//     {make, model, year, confidence 0-100, variant} and {name, location,
//     country, coordinates, confidence, category, address}.
//   - Model ids are dotted (global_v0.2); a model list layout can be chosen
//     (SetModelsLayout), the credit summary's too (SetCreditsLayout).
//   - A model whose status is "down" answers 503 EXTERNAL_SERVICE_ERROR
//     and charges nothing; "unknown" serves normally.
//   - Charging happens only when a success response is about to be
//     delivered: right before charging, the request context is checked, so
//     a client that timed out or disconnected while the prediction ran is
//     not charged, and an account that cannot pay then gets 402 (as the
//     backend's failed charge). A connection lost after that point is
//     charged, as with any real service; the DropAfterChargeRate and
//     GatewayErrorAfterChargeRate faults reproduce that case.
//   - A malformed 200 body (fault) is charged by default: a real service
//     that answered 200 did the work.
package geosim
