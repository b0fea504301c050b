package awsapi

import (
	"encoding/json"
	"net/http"
)

// writeRESTJSON answers a restJson1 operation's output.
func writeRESTJSON(w http.ResponseWriter, status int, out any) {
	data, err := json.Marshal(out)
	if err != nil {
		failRESTJSON(w, asAPIError(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// failRESTJSON answers a restJson1 error: its shape's name in
// X-Amzn-ErrorType, which the SDK reads first.
func failRESTJSON(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", e.Code)
	w.WriteHeader(e.Status)
	kind := "User"
	if e.Status >= 500 {
		kind = "Service"
	}
	data, _ := json.Marshal(map[string]string{"Type": kind, "message": e.Message})
	_, _ = w.Write(data)
}
