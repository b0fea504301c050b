package main

import (
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// backendEnv serves the simulator's backend profile (keys refused off
// predict, its own key header) and returns the CLI's environment for it.
func backendEnv(t *testing.T, optFns ...func(*geosim.Config)) (*geosim.Server, map[string]string) {
	t.Helper()
	sim, url := startSim(t, append([]func(*geosim.Config){geosim.WithProfile(geosim.ProfileBackend)}, optFns...)...)
	env := simEnv(url, testKey)
	env[envvars.APIKeyHeader] = geosim.BackendKeyHeader
	return sim, env
}

// TestCreditsTellsAWrongKeyFromAnEndpointWithoutKeys: a credit summary that
// takes no API keys is not blamed on a key the service accepts.
func TestCreditsTellsAWrongKeyFromAnEndpointWithoutKeys(t *testing.T) {
	sim, env := backendEnv(t)
	r := runCLI(t, env, nil, "credits")
	assertOneLineError(t, r, "credits: the service does not let API keys read the credit summary (API keys not allowed for this endpoint. Use frontend application.); your key is fine")
	for _, want := range []string{"web application", "geolocate credits --declare"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("no %q in %q", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "check "+envvars.APIKey) {
		t.Errorf("a good key is blamed: %s", r.stderr)
	}
	if sim.Charged(geosim.DefaultOrg) != 0 {
		t.Errorf("checking the key charged %d credits", sim.Charged(geosim.DefaultOrg))
	}

	env[envvars.APIKey] = "geo_test_fake_key_wrong"
	r = runCLI(t, env, nil, "credits")
	assertOneLineError(t, r, "credits: the service does not let API keys read the credit summary")
	if !strings.Contains(r.stderr, "the prediction endpoint refuses this key too") || !strings.Contains(r.stderr, "check "+envvars.APIKey) {
		t.Errorf("a wrong key is not named: %s", r.stderr)
	}

	// Where the summary takes keys, a wrong one is named as such.
	_, url := startSim(t)
	r = runCLI(t, simEnv(url, "geo_test_fake_key_wrong"), nil, "credits")
	assertOneLineError(t, r, "credits: the service refused this key (401)")
	// The key in the wrong header: the service received none.
	_, benv := backendEnv(t)
	delete(benv, envvars.APIKeyHeader)
	r = runCLI(t, benv, nil, "credits")
	if !strings.Contains(r.stderr, "received no key") || !strings.Contains(r.stderr, envvars.APIKeyHeader) {
		t.Errorf("a key sent in the wrong header: %s", r.stderr)
	}
}

func TestModelsWithoutKeysOnTheList(t *testing.T) {
	_, env := backendEnv(t)
	r := runCLI(t, env, nil, "models")
	if r.code != 0 || !strings.Contains(r.stdout, geosim.ModelGlobalDefault) || !strings.Contains(r.stderr, "public models") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestKeyHeaderSetting(t *testing.T) {
	_, env := backendEnv(t)
	r := runCLI(t, env, nil, "predict", imgJPEG)
	if r.code != 0 || !strings.Contains(r.stdout, "credits consumed: 1") {
		t.Errorf("predict with GEO_API_KEY_HEADER: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	env[envvars.APIKeyHeader] = "X Service Key"
	r = runCLI(t, env, nil, "predict", imgJPEG)
	assertOneLineError(t, r, "predict: "+envvars.APIKeyHeader+": the key header name")
}

// TestDoctorKeyWhereTheModelListTakesNoKeys: the key is checked on the
// prediction endpoint, free, in the header the deployed predictor uses.
func TestDoctorKeyWhereTheModelListTakesNoKeys(t *testing.T) {
	w := newDoctorWorld(t)
	sim, url := startSim(t, geosim.WithProfile(geosim.ProfileBackend))
	w.sim, w.env[envvars.APIURL] = sim, url
	w.functions.env[docFnArn][envvars.APIURL] = url
	w.functions.env[docFnArn][envvars.APIKeyHeader] = geosim.BackendKeyHeader
	w.secrets.value = `{"api_key":"` + sim.DemoKey() + `"}`
	rep, _ := w.doctor(t)
	rep.expect(t, "api-key", checkPass, "public models listed: the model list takes no keys", "")
	if sim.Charged(geosim.DefaultOrg) != 0 {
		t.Errorf("doctor charged %d", sim.Charged(geosim.DefaultOrg))
	}

	w.secrets.value = `{"api_key":"geo_test_fake_key_refused"}`
	rep, _ = w.doctor(t)
	if c := rep.check(t, "api-key"); c.Status != checkFail || !strings.Contains(c.Detail, "refused the secret's key") {
		t.Errorf("api-key = %+v", c)
	}

	delete(w.functions.env[docFnArn], envvars.APIKeyHeader)
	w.secrets.value = `{"api_key":"` + sim.DemoKey() + `"}`
	rep, _ = w.doctor(t)
	if c := rep.check(t, "api-key"); c.Status != checkFail || !strings.Contains(c.Fix, "apiKeyHeader") {
		t.Errorf("a key in the wrong header: api-key = %+v", c)
	}
}
