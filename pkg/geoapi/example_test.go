package geoapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
)

func ExampleClient_Predict() {
	// A local simulator stands in for the service.
	sim := geosim.New(func(c *geosim.Config) { c.DemoKey = "geo_test_fake_key_1" })
	ts := httptest.NewServer(sim)
	defer ts.Close()

	client, err := geoapi.New(ts.URL, func(o *geoapi.Options) { o.APIKey = "geo_test_fake_key_1" })
	if err != nil {
		panic(err)
	}
	jpeg := append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, make([]byte, 1020)...)
	out, err := client.Predict(context.Background(), &geoapi.PredictInput{Image: geoapi.BytesSource(jpeg), TopN: 3})
	var retired *geoapi.ValidationError
	switch {
	case errors.As(err, &retired):
		fmt.Println("retired model:", retired.RetiredModelID)
	case err != nil:
		fmt.Println("failed:", err, "retry later:", geoapi.Retryable(err))
	default:
		fmt.Println(out.Result.Type, out.CreditsConsumed, out.Attempts)
	}
	// Output: coordinates 1 1
}
