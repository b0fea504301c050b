package geoapi

import (
	"reflect"
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
	f.Add([]byte(backendCoordinatesBody))
	f.Add([]byte(backendVehicleBody))
	f.Add([]byte(backendPropertyBody))
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

// The public backend's result bodies: SUCCESS in upper case, clusters with
// admin2 and points, vehicle and property matches under predictions.
const (
	backendCoordinatesBody = `{"message_code":"SUCCESS","message":"Operation completed successfully","data":{"prediction":{"result_type":"coordinates",
"clusters":[{"center":{"latitude":40.4168,"longitude":-3.7038},"location":{"name":"Madrid","admin1":"Madrid","admin2":"Provincia de Madrid","country_code":"ES"},"radius_km":4.2,
"points":[{"latitude":40.41,"longitude":-3.70},{"latitude":40.42,"longitude":-3.71}]}],
"processing_time_ms":812},"prediction_id":"` + testPredictionID + `","model_id":"global_v0.1","credits_consumed":1}}`
	backendVehicleBody = `{"message_code":"SUCCESS","message":"Operation completed successfully","data":{"prediction":{"result_type":"vehicle",
"predictions":[{"make":"Mercedes-Benz","model":"S-Class","year":"2020-2023","confidence":87.5,"variant":"S 580 4MATIC","images":[]},
{"make":"BMW","model":"7 Series","year":2022,"confidence":9}],"processing_time_ms":120},
"prediction_id":"` + testPredictionID + `","model_id":"cars_v0.1","credits_consumed":2}}`
	backendPropertyBody = `{"message_code":"SUCCESS","message":"Operation completed successfully","data":{"prediction":{"result_type":"property",
"predictions":[{"name":"Grand Hyatt Tokyo","location":"Roppongi Hills, Tokyo","country":"Japan","coordinates":{"latitude":35.6604,"longitude":139.7292},
"confidence":91,"category":"hotel","address":"6-10-3 Roppongi, Minato-ku","images":[]}],"processing_time_ms":150},
"prediction_id":"` + testPredictionID + `","model_id":"property_v0.1","credits_consumed":3}}`
)

func TestDecodeBackendResults(t *testing.T) {
	out, err := decodePredictBody([]byte(backendCoordinatesBody))
	if err != nil {
		t.Fatal(err)
	}
	c := out.Result.Clusters[0]
	if out.MessageCode != "SUCCESS" || out.ModelID != "global_v0.1" || c.Location.Admin2 != "Provincia de Madrid" ||
		len(c.Points) != 2 || c.Points[1] != (Coordinates{40.42, -3.71}) {
		t.Errorf("coordinates result = %+v", out)
	}
	if top, ok := out.Result.Top(); !ok || top.Admin2 != "Provincia de Madrid" {
		t.Errorf("Top() = %+v, %v", top, ok)
	}

	out, err = decodePredictBody([]byte(backendVehicleBody))
	if err != nil {
		t.Fatal(err)
	}
	want := []VehicleMatch{
		{Make: "Mercedes-Benz", Model: "S-Class", Year: "2020-2023", ConfidencePercent: 87.5, Variant: "S 580 4MATIC"},
		{Make: "BMW", Model: "7 Series", Year: "2022", ConfidencePercent: 9},
	}
	if !reflect.DeepEqual(out.Result.Vehicles, want) || out.CreditsConsumed != 2 {
		t.Errorf("vehicles = %+v, want %+v", out.Result.Vehicles, want)
	}
	// A vehicle's predictions are no locations: no point prediction at 0,0.
	if len(out.Result.Predictions) != 0 || out.Result.TopPrediction != nil {
		t.Errorf("vehicle matches read as point predictions: %+v", out.Result.Predictions)
	}
	if top, ok := out.Result.Top(); ok {
		t.Errorf("a vehicle result has a top location: %+v", top)
	}

	out, err = decodePredictBody([]byte(backendPropertyBody))
	if err != nil {
		t.Fatal(err)
	}
	p := out.Result.Properties
	if len(p) != 1 || p[0].Name != "Grand Hyatt Tokyo" || p[0].Country != "Japan" || p[0].Location != "Roppongi Hills, Tokyo" ||
		p[0].Coordinates == nil || *p[0].Coordinates != (Coordinates{35.6604, 139.7292}) || p[0].ConfidencePercent != 91 ||
		p[0].Category != "hotel" || p[0].Address == "" {
		t.Errorf("properties = %+v", p)
	}
	if len(out.Result.Predictions) != 0 || len(out.Result.Raw) == 0 {
		t.Errorf("property result: predictions %+v, raw %d bytes", out.Result.Predictions, len(out.Result.Raw))
	}

	// A match the client cannot read is skipped; the others and Raw stay.
	out, err = decodePredictBody([]byte(`{"data":{"prediction":{"result_type":"vehicle","predictions":[{"make":1},{"make":"Fiat","model":"500"}]},
"prediction_id":"` + testPredictionID + `","credits_consumed":2}}`))
	if err != nil || len(out.Result.Vehicles) != 1 || out.Result.Vehicles[0].Make != "Fiat" {
		t.Errorf("err = %v, vehicles = %+v", err, out.Result.Vehicles)
	}
}
