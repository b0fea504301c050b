package geosim

import (
	"net/http"
	"slices"
	"testing"
)

// modelIDs lists the ids and statuses of a nested-layout model list.
func modelIDs(t *testing.T, resp response) map[string]string {
	t.Helper()
	if resp.status != http.StatusOK {
		t.Fatalf("status %d: %s", resp.status, resp.body)
	}
	out := map[string]string{}
	for _, m := range dig(t, resp.json(t), "data", "models").([]any) {
		out[dig(t, m, "id").(string)] = dig(t, m, "status").(string)
	}
	return out
}

func TestModelList(t *testing.T) {
	sim, base := newTestServer(t)
	sim.AddAccount("acme", 10, 0)
	acmeKey := sim.IssueKey("acme", "ci")
	public := []string{ModelGlobalDefault, ModelHighAccuracy, ModelVehicle}
	tests := []struct {
		name string
		key  string
		want []string
	}{
		{"no key: public only", "", public},
		{"granted org: public and whitelist", testKey, append(slices.Clone(public), ModelPropertyWL)},
		{"other org: public only", acmeKey, public},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := modelIDs(t, get(t, base, PathModels, tt.key))
			if len(got) != len(tt.want) {
				t.Errorf("models %v, want %v", got, tt.want)
			}
			for _, id := range tt.want {
				if got[id] != StatusReady {
					t.Errorf("model %s: status %q, want ready", id, got[id])
				}
			}
			if _, ok := got[ModelRetired]; ok {
				t.Error("the retired model is listed")
			}
		})
	}
	if resp := get(t, base, PathModels, "geo_test_fake_key_bad"); resp.status != http.StatusUnauthorized {
		t.Errorf("invalid key: status %d, want 401", resp.status)
	}
}

func TestModelListFollowsChanges(t *testing.T) {
	sim, base := newTestServer(t)
	if err := sim.SetModelStatus(ModelVehicle, StatusDown); err != nil {
		t.Fatal(err)
	}
	if err := sim.RetireModel(ModelHighAccuracy); err != nil {
		t.Fatal(err)
	}
	if err := sim.RetireModel(ModelGlobalDefault); err == nil {
		t.Error("retiring the default model succeeded")
	}
	sim.AddModel(Model{ID: "geo-global-v3", Type: TypeGlobal})
	if err := sim.SetDefaultModel("geo-global-v3"); err != nil {
		t.Fatal(err)
	}
	got := modelIDs(t, get(t, base, PathModels, ""))
	if got[ModelVehicle] != StatusDown || got["geo-global-v3"] != StatusReady {
		t.Errorf("models %v", got)
	}
	if _, ok := got[ModelHighAccuracy]; ok {
		t.Error("a retired model is still listed")
	}
	resp := predict(t, base, testKey, nil, testJPEG(t, 1))
	if dig(t, resp.json(t), "data", "model_id") != "geo-global-v3" {
		t.Errorf("default route ran %v, want the new default", dig(t, resp.json(t), "data", "model_id"))
	}
}

func TestModelListLayouts(t *testing.T) {
	sim, base := newTestServer(t)
	for _, tt := range []struct {
		layout ModelsLayout
		path   []any
	}{
		{ModelsLayoutNested, []any{"data", "models", 0, "id"}},
		{ModelsLayoutDataArray, []any{"data", 0, "id"}},
		{ModelsLayoutBareArray, []any{0, "id"}},
	} {
		sim.SetModelsLayout(tt.layout)
		resp := get(t, base, PathModels, "")
		if got := dig(t, decodeAny(t, resp.body), tt.path...); got != ModelGlobalDefault {
			t.Errorf("layout %d: %v = %v", tt.layout, tt.path, got)
		}
	}
}
