package secretkeytest_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/geolocate-aws/geolocate/pkg/local/awscalls"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/secretkey/secretkeytest"
)

// TestEveryOperationIsRecorded calls each method of the interface the code
// calls Secrets Manager through, on the fake, and requires the fake to
// report it under the method's name (the SDK's operation name): a method
// added to the interface and the fake cannot escape the golden call lists.
func TestEveryOperationIsRecorded(t *testing.T) {
	var rec awscalls.Recorder
	fake := secretkeytest.New("geo/key", "geo_test_fake_key_1").RecordTo(rec.AddSecretsManager)
	api := reflect.TypeFor[secretkey.SecretsManagerAPI]()
	if api.NumMethod() == 0 {
		t.Fatal("SecretsManagerAPI has no methods")
	}
	for i := range api.NumMethod() {
		m := api.Method(i)
		in := reflect.New(m.Type.In(1).Elem()) // *XxxInput
		if f := in.Elem().FieldByName("SecretId"); f.IsValid() {
			id := "geo/key"
			f.Set(reflect.ValueOf(&id))
		}
		if f := in.Elem().FieldByName("VersionId"); f.IsValid() {
			v := "v0"
			f.Set(reflect.ValueOf(&v))
		}
		out := reflect.ValueOf(fake).MethodByName(m.Name).Call([]reflect.Value{reflect.ValueOf(context.Background()), in})
		if err, _ := out[1].Interface().(error); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
		calls := rec.Calls()
		want := awscalls.Call{Service: "Secrets Manager", Operation: m.Name, SecretID: "geo/key"}
		if len(calls) != i+1 || !reflect.DeepEqual(calls[i], want) {
			t.Errorf("after %s the fake reported %+v, want it to end with %+v", m.Name, calls, want)
		}
		if got := calls[len(calls)-1].IAMActions(); len(got) != 1 || got[0] != "secretsmanager:"+m.Name {
			t.Errorf("%s authorizes as %v", m.Name, got)
		}
	}

	// A failed call is still a call.
	fake.FailWith(context.DeadlineExceeded)
	if _, err := fake.DescribeSecret(context.Background(), &secretsmanager.DescribeSecretInput{SecretId: aws.String("geo/key")}); err == nil {
		t.Fatal("DescribeSecret succeeded after FailWith")
	}
	if last := rec.Calls()[len(rec.Calls())-1]; last.Operation != "DescribeSecret" || !last.Failed {
		t.Errorf("failed call reported as %+v", last)
	}
}
