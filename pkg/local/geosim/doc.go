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
//   - The key travels in the X-Service-Key header and starts with "geo_".
//   - Credits per call: global 1, high accuracy 3, vehicle id 2, property 3;
//     credits_consumed reports the cost of the model that ran.
//   - Statuses: 401 missing or invalid key; 402 no credits left; 422 top_n out
//     of range, or a retired model_id (the response names the model); 429
//     rate limit exceeded.
//
// # What it chooses where the contract shows nothing
//
//   - Error bodies are {"message_code","message"}, plus model_id for a
//     rejected model and a FastAPI-style detail list for field errors. A
//     retired or unknown model is message_code "model_retired"; a whitelist
//     model not granted to the caller is 422 "model_not_available", because
//     an id absent from the caller's list is rejected with 422.
//   - The model list and credit summary layouts are selectable
//     (SetModelsLayout, SetCreditsLayout), so clients are tested against
//     several; rate-limit values are configurable, and a 429 carries
//     Retry-After and X-RateLimit-Retry-After.
//   - Vehicle id and property models return result types "vehicle" and
//     "property" with made-up fields.
//   - An upload over the limit answers 413 "payload_too_large"; an
//     unsupported format answers 415.
//   - A model whose status is "down" answers 503 with Retry-After and charges
//     nothing; "unknown" serves normally.
//   - Charging happens only when a success response is about to be delivered:
//     right before charging, the request context is checked, so a client that
//     timed out or disconnected while the prediction ran is not charged. (A
//     connection lost after that point is charged, as with any real service;
//     the DropAfterChargeRate and GatewayErrorAfterChargeRate faults reproduce
//     that case.)
//   - A malformed 200 body (fault) is charged by default: a real service that
//     answered 200 did the work.
package geosim
