package geoapi

import (
	"strings"
	"testing"
)

func FuzzDecodePredictBody(f *testing.F) {
	f.Add([]byte(coordinatesBody))
	f.Add([]byte(accuracyBody))
	f.Add([]byte(`{"data":{"prediction":{"result_type":"x"},"prediction_id":"` + testPredictionID + `"}}`))
	f.Add([]byte(`{"data":{"prediction":null,"prediction_id":"nope","credits_consumed":"1e99"}}`))
	f.Add([]byte(`{"data":{"prediction":{"result_type":"accuracy","predictions":[null],"top_prediction":null,"processing_time_ms":1e300},"prediction_id":"` + testPredictionID + `"}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := decodePredictBody(body)
		if err != nil {
			if out != nil {
				t.Fatal("output together with an error")
			}
			return
		}
		if len(out.Result.Raw) == 0 {
			t.Fatal("raw result not kept")
		}
		_, _ = out.Result.Top()
		if strings.TrimSpace(out.PredictionID.String()) == "" {
			t.Fatal("empty prediction id")
		}
	})
}
