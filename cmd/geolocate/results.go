package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// runResults: geolocate results [--status S] [--since T] [--prefix P]
// [--limit N] [--json|--geojson|--map FILE] [--table NAME | --stack NAME].
func runResults(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("results", "")
	var (
		status    = fs.String("status", "", "only records with this status: "+strings.Join(ledger.Statuses, ", ")+" (default: all but in_progress, which is found by scanning the whole table)")
		since     = fs.String("since", "24h", "only records updated since this time: a duration ago (90m, 7d), a date (2026-11-22) or RFC 3339")
		limit     = fs.Int("limit", 100, "at most this many records, newest first (0: no limit)")
		asJSON    = fs.Bool("json", false, "print the records as a JSON array")
		asGeoJSON = fs.Bool("geojson", false, "print the succeeded records as a GeoJSON FeatureCollection (opens on a map)")
		prefix    = fs.String("prefix", "", "only records of objects whose key starts with this prefix")
		history   = fs.Bool("history", false, "every result of each object version (run 0's and each reprocess run's), not only the latest")
		asMap     = registerMapFlags(fs)
		loc       stackLocator
	)
	loc.register(fs, true)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *asJSON && *asGeoJSON {
		return usageError{errors.New("--json and --geojson exclude each other")}
	}
	if *asMap.path != "" && (*asJSON || *asGeoJSON) {
		return usageError{errors.New("--map writes a page instead of printing: it excludes --json and --geojson")}
	}
	if err := asMap.check(); err != nil {
		return err
	}
	if *limit < 0 {
		return usageError{fmt.Errorf("--limit %d is negative", *limit)}
	}
	from, err := jobs.ParseSince(*since, time.Now())
	if err != nil {
		return usageError{fmt.Errorf("--since: %w", err)}
	}
	if *status != "" && !isStatus(*status) {
		return usageError{fmt.Errorf("--status %q is not one of %s", *status, strings.Join(ledger.Statuses, ", "))}
	}

	clients, err := loadAWS(ctx)
	if err != nil {
		return err
	}
	table, err := loc.table(ctx, c, clients)
	if err != nil {
		return err
	}
	records, err := ledger.New(clients.tables, table).Query(ctx, ledger.QueryInput{Status: *status, Since: from, KeyPrefix: *prefix, Limit: *limit})
	if err != nil {
		return fmt.Errorf("read table %s: %w", table, err)
	}
	if !*history {
		records = latestPerVersion(records)
	}
	switch {
	case *asMap.path != "":
		return asMap.write(records, "Predictions in "+table, resultsFilters(*status, from, *prefix, *limit, len(records)), c.stderr)
	case *asGeoJSON:
		return writeGeoJSON(c.stdout, records)
	case *asJSON:
		rows := make([]resultRow, 0, len(records))
		for i := range records {
			rows = append(rows, rowFromRecord(&records[i]))
		}
		return writeIndentedJSON(c.stdout, rows)
	default:
		rows := make([]resultRow, 0, len(records))
		for i := range records {
			rows = append(rows, rowFromRecord(&records[i]))
		}
		if len(rows) == 0 {
			fmt.Fprintf(c.stderr, "no records in %s since %s\n", table, from.Format(time.RFC3339))
			return nil
		}
		if err := writeResultsTable(c.stdout, rows, true); err != nil {
			return err
		}
		if a, ok := measureAccuracy(records); ok {
			fmt.Fprintf(c.stdout, "\naccuracy: %s\n", a)
		}
		return nil
	}
}

// latestPerVersion keeps, of each object version's records (run 0's and
// each reprocess run's), its latest result: the most recently updated
// succeeded record, else the most recently updated one (a run's record
// that waits for its cap does not hide the result it would replace), in
// the order given.
func latestPerVersion(records []ledger.Record) []ledger.Record {
	newer := func(a, b *ledger.Record) bool {
		if sa, sb := a.Status == ledger.StatusSucceeded, b.Status == ledger.StatusSucceeded; sa != sb {
			return sa
		}
		return a.UpdatedAt.After(b.UpdatedAt)
	}
	latest := map[string]int{}
	for i := range records {
		r := &records[i]
		id := ledger.ObjectRef{Bucket: r.Bucket, Key: r.Key, VersionID: r.VersionID, ETag: r.ETag}.String()
		if j, ok := latest[id]; !ok || newer(r, &records[j]) {
			latest[id] = i
		}
	}
	kept := make([]ledger.Record, 0, len(latest))
	for i := range records {
		r := &records[i]
		if latest[ledger.ObjectRef{Bucket: r.Bucket, Key: r.Key, VersionID: r.VersionID, ETag: r.ETag}.String()] == i {
			kept = append(kept, *r)
		}
	}
	return kept
}

// runLabel names a result's run in the table: 0 for the original upload.
func runLabel(run string) string {
	if run == "" {
		return "0"
	}
	return run
}

// resultsFilters describes a results query for the map page.
func resultsFilters(status string, since time.Time, prefix string, limit, got int) []string {
	what := "every status"
	if status != "" {
		what = "status " + status
	}
	line := fmt.Sprintf("%d record(s), %s, updated since %s UTC", got, what, since.UTC().Format("2006-01-02 15:04"))
	if prefix != "" {
		line += fmt.Sprintf(", keys starting %q", prefix)
	}
	if limit > 0 && got >= limit {
		line += fmt.Sprintf(", the newest %d only (--limit)", limit)
	}
	return []string{line + "."}
}

func isStatus(s string) bool {
	for _, st := range ledger.Statuses {
		if s == st {
			return true
		}
	}
	return false
}

// resultRow is one record as the operator commands print it (results and
// local share it).
type resultRow struct {
	Object     string    `json:"object"` // s3://bucket/key
	Bucket     string    `json:"bucket"`
	Key        string    `json:"key"`
	VersionID  string    `json:"version_id,omitempty"`
	Status     string    `json:"status"`
	Reason     string    `json:"reason,omitempty"` // error code of a rejected, failed or waiting record
	Detail     string    `json:"detail,omitempty"`
	DeadLetter bool      `json:"dead_letter,omitempty"` // its message is in the dead-letter queue
	Place      string    `json:"place,omitempty"`
	Admin2     string    `json:"admin2,omitempty"`
	Admin1     string    `json:"admin1,omitempty"`
	Country    string    `json:"country,omitempty"`
	Latitude   *float64  `json:"latitude,omitempty"`
	Longitude  *float64  `json:"longitude,omitempty"`
	RadiusKM   *float64  `json:"radius_km,omitempty"`
	Confidence *float64  `json:"confidence,omitempty"`
	HeadingDeg *float64  `json:"heading_deg,omitempty"`
	Credits    int       `json:"credits"`
	ModelID    string    `json:"model_id,omitempty"`
	Fallback   bool      `json:"fallback,omitempty"`
	UpdatedAt  time.Time `json:"updated_at,omitzero"`

	// ReusedFrom names the object whose paid answer this one copies (same
	// photo and request: no call, 0 credits).
	ReusedFrom string `json:"reused_from,omitempty"`
	// createdAt orders the versions of a key in the table (versionLabels).
	createdAt time.Time

	// Run is the reprocess run of the result (empty: the original
	// upload); Previous the result it replaced.
	Run      string               `json:"run,omitempty"`
	Previous *ledger.HistoryEntry `json:"previous,omitempty"`

	Source        string   `json:"source,omitempty"` // "service" or "exif" (recorded from EXIF, no call)
	ExifLatitude  *float64 `json:"exif_latitude,omitempty"`
	ExifLongitude *float64 `json:"exif_longitude,omitempty"`
	ErrorKm       *float64 `json:"error_km,omitempty"` // top prediction to EXIF position
	CapturedAt    string   `json:"captured_at,omitempty"`
	Camera        string   `json:"camera,omitempty"`
	// Downscaled is "downscaled 8160x6120 25.1 MB -> 4096x3072 3.2 MB" for a
	// photo over the limit sent resized, "re-encoded ..." when its sides
	// were kept and only the encoding made it fit.
	Downscaled string `json:"downscaled,omitempty"`

	// What of the photo's metadata the service received: upload_metadata
	// strip (metadata_removed says what, kind -> bytes) or keep; with keep,
	// position_sent says the upload carried the EXIF position, so the
	// prediction has no error_km.
	UploadMetadata  string           `json:"upload_metadata,omitempty"`
	MetadataRemoved map[string]int64 `json:"metadata_removed,omitempty"`
	PositionSent    bool             `json:"position_sent,omitempty"`

	// Match is the best match of a vehicle or property result, in words
	// ("vehicle Mercedes-Benz S-Class 2020-2023, 87.5%"); Vehicles and
	// Properties are every match as recorded.
	Match      string            `json:"match,omitempty"`
	ResultType string            `json:"result_type,omitempty"`
	Vehicles   []ledger.Vehicle  `json:"vehicles,omitempty"`
	Properties []ledger.Property `json:"properties,omitempty"`
}

func rowFromRecord(r *ledger.Record) resultRow {
	return resultRow{
		Object:     "s3://" + r.Bucket + "/" + r.Key,
		Bucket:     r.Bucket,
		Key:        r.Key,
		VersionID:  r.VersionID,
		Status:     r.Status,
		Reason:     r.ErrorCode,
		Detail:     r.ErrorMessage,
		DeadLetter: r.DeadLetter,
		Place:      r.Place,
		Admin2:     r.Admin2,
		Admin1:     r.Admin1,
		Country:    r.CountryCode,
		Latitude:   r.Latitude,
		Longitude:  r.Longitude,
		RadiusKM:   r.RadiusKM,
		Confidence: r.Confidence,
		HeadingDeg: r.HeadingDeg,
		Credits:    r.CreditsConsumed,
		ModelID:    r.ModelID,
		Fallback:   r.Fallback,
		UpdatedAt:  r.UpdatedAt,
		ReusedFrom: r.ReusedFrom,
		createdAt:  r.CreatedAt,
		Run:        r.Run,
		Previous:   r.Previous,

		Source:        r.Source,
		ExifLatitude:  r.ExifLatitude,
		ExifLongitude: r.ExifLongitude,
		ErrorKm:       r.ErrorKm,
		CapturedAt:    r.CapturedAt,
		Camera:        strings.TrimSpace(r.CameraMake + " " + r.CameraModel),
		Downscaled:    downscaledFrom(r),

		UploadMetadata:  r.UploadMetadata,
		MetadataRemoved: r.MetadataRemoved,
		PositionSent:    r.PositionSent,

		Match:      matchFrom(r),
		ResultType: r.ResultType,
		Vehicles:   r.Vehicles,
		Properties: r.Properties,
	}
}

// matchFrom words the best match of a vehicle or property result.
func matchFrom(r *ledger.Record) string {
	pct := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) + "%" }
	join := func(parts ...string) string {
		var kept []string
		for _, p := range parts {
			if p = strings.TrimSpace(p); p != "" {
				kept = append(kept, p)
			}
		}
		return strings.Join(kept, " ")
	}
	switch {
	case len(r.Vehicles) > 0:
		v := r.Vehicles[0]
		return "vehicle " + join(v.Make, v.Model, v.Variant, v.Year) + ", " + pct(v.ConfidencePercent)
	case len(r.Properties) > 0:
		p := r.Properties[0]
		where := strings.Join(slices.DeleteFunc([]string{p.Location, p.Country}, func(s string) bool { return s == "" }), ", ")
		return "property " + join(p.Name, "("+where+")") + ", " + pct(p.ConfidencePercent)
	}
	return ""
}

// downscaledFrom describes the re-encoding of a photo over the limit:
// "downscaled" when it was resized, "re-encoded" when its sides were
// already within the maximum and only the JPEG encoding made it fit.
func downscaledFrom(r *ledger.Record) string {
	if !r.Downscaled {
		return ""
	}
	how := "downscaled"
	if r.SentWidth == r.OriginalWidth && r.SentHeight == r.OriginalHeight {
		how = "re-encoded"
	}
	mb := func(n int64) string { return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB" }
	return fmt.Sprintf("%s %dx%d %s -> %dx%d %s", how, r.OriginalWidth, r.OriginalHeight, mb(r.Size), r.SentWidth, r.SentHeight, mb(r.SentBytes))
}

// rowError is the distance from the prediction to the EXIF position, or
// why there is none although both are known.
func rowError(r resultRow) string {
	if r.ErrorKm == nil && r.PositionSent && r.ExifLatitude != nil {
		return "(position sent)"
	}
	if r.ErrorKm == nil {
		return "-"
	}
	return km(*r.ErrorKm)
}

// writeResultsTable prints rows as an aligned table.
func writeResultsTable(w io.Writer, rows []resultRow, withTime bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "STATUS\tPLACE\tCOUNTRY\tLAT\tLON\tRADIUS/CONFIDENCE\tCREDITS\tREUSED FROM\tERROR VS EXIF"
	versions := versionLabels(rows)
	if versions != nil {
		header = "VERSION\t" + header
	}
	header = "OBJECT\t" + header
	withRun := slices.ContainsFunc(rows, func(r resultRow) bool { return r.Run != "" })
	if withRun {
		header = "RUN\t" + header
	}
	if withTime {
		header = "UPDATED\t" + header
	}
	fmt.Fprintln(tw, header)
	for i, r := range rows {
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s",
			rowStatus(r), dash(rowPlace(r)), dash(r.Country), rowCoord(r.Latitude), rowCoord(r.Longitude), rowSpread(r), r.Credits, dash(reusedFromLabel(r)), rowError(r))
		if versions != nil {
			line = dash(versions[i]) + "\t" + line
		}
		line = r.Key + "\t" + line
		if withRun {
			line = runLabel(r.Run) + "\t" + line
		}
		if withTime {
			line = r.UpdatedAt.UTC().Format("2006-01-02 15:04:05") + "\t" + line
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The re-encoding's figures and a refusal's cause would widen the
	// STATUS column past a terminal's width: they go below the table, one
	// line each, so the cause shows without --verbose.
	for _, r := range rows {
		if r.Downscaled != "" {
			how, figures, _ := strings.Cut(r.Downscaled, " ")
			fmt.Fprintf(w, "%s %s: %s (over the service's size limit)\n", how, r.Key, figures)
		}
	}
	for _, r := range rows {
		if why := rowCause(r); why != "" {
			fmt.Fprintf(w, "%s %s: %s\n", r.Status, r.Key, why)
		}
	}
	return nil
}

// versionLabels is each row's version in words, or nil when no key has more
// than one version among rows: the column is shown only when it tells rows
// apart (a re-upload of the same key, such as a touch under WATCH=1, is a
// new version, processed and charged anew). The versions of a key are
// numbered oldest first ("1 of 2", "2 of 2"), by when their record was
// created: S3's version ids are opaque and two uploads a second apart
// share most of theirs ("3HL4kqtJlcpXroDTDmJ+" and "3HL4kqtJlcpXroDTDmJ."
// cut to a prefix), and --json has them whole. An object without a version
// (an unversioned bucket, "", or S3's "null" version of an object stored
// before versioning was turned on) is "unversioned".
func versionLabels(rows []resultRow) []string {
	type version struct {
		id    string
		first time.Time
		at    int // first row, which orders versions created at the same time
	}
	byKey := map[string][]version{}
	repeated := false
	for i, r := range rows {
		if unversioned(r.VersionID) {
			continue
		}
		k := r.Bucket + "/" + r.Key
		j := slices.IndexFunc(byKey[k], func(v version) bool { return v.id == r.VersionID })
		switch {
		case j < 0:
			byKey[k] = append(byKey[k], version{r.VersionID, r.createdAt, i})
			repeated = repeated || len(byKey[k]) > 1
		case !r.createdAt.IsZero() && (byKey[k][j].first.IsZero() || r.createdAt.Before(byKey[k][j].first)):
			byKey[k][j].first = r.createdAt
		}
	}
	if !repeated {
		return nil
	}
	for _, vs := range byKey {
		slices.SortStableFunc(vs, func(a, b version) int {
			if c := a.first.Compare(b.first); c != 0 {
				return c
			}
			return a.at - b.at
		})
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		if unversioned(r.VersionID) {
			out[i] = "unversioned"
			continue
		}
		vs := byKey[r.Bucket+"/"+r.Key]
		n := slices.IndexFunc(vs, func(v version) bool { return v.id == r.VersionID })
		out[i] = fmt.Sprintf("%d of %d", n+1, len(vs))
	}
	return out
}

// unversioned reports a version id that names no version: none at all, or
// S3's "null" version.
func unversioned(id string) bool { return id == "" || id == "null" }

// reusedFromLabel is the REUSED FROM column: the object whose paid answer
// the row copies, by its key alone when it is in the row's bucket, or
// "an earlier version" of the row's own key; the version id and run (in
// --json's reused_from) made the column about 100 characters wide.
func reusedFromLabel(r resultRow) string {
	ref, ok := strings.CutPrefix(r.ReusedFrom, "s3://")
	if !ok {
		return r.ReusedFrom
	}
	// ObjectRef.String: "s3://<bucket>/<key> (<version>)[ run <run>]";
	// a key may hold " (", so the version is the last parenthesis.
	if i := strings.LastIndex(ref, " ("); i >= 0 {
		ref = ref[:i]
	}
	bucket, key, _ := strings.Cut(ref, "/")
	switch {
	case bucket != r.Bucket:
		return "s3://" + ref
	case key == r.Key:
		return "an earlier version"
	}
	return key
}

// maxCauseBytes bounds a cause printed below the table: a record's message
// may hold up to ledger.MaxErrorMessageBytes, and --json prints all of it.
const maxCauseBytes = 240

// rowCause is why a record was not geolocated, on one line: the recorded
// message of a rejected, failed or waiting record. A dead letter without a
// record has its own line below the table (writeLocalReport), so it is not
// repeated here.
func rowCause(r resultRow) string {
	if r.Detail == "" || r.Status == ledger.StatusSucceeded || r.Reason == reasonDeadLetter {
		return ""
	}
	why := strings.Join(strings.Fields(r.Detail), " ")
	if len(why) <= maxCauseBytes {
		return why
	}
	cut := maxCauseBytes
	for cut > 0 && !utf8.RuneStart(why[cut]) {
		cut--
	}
	return why[:cut] + "… (--json prints all of it)"
}

// rowStatus is the status with its reason, and where the object waits for
// an operator's redrive.
func rowStatus(r resultRow) string {
	status := r.Status
	switch {
	case r.Source == ledger.SourceEXIF:
		status += " (from EXIF, no call)"
	case r.Downscaled != "":
		how, _, _ := strings.Cut(r.Downscaled, " ") // the figures are below the table
		status += " (" + how + ")"
	case r.Reason != "" && r.DeadLetter:
		status += " (" + r.Reason + ", in the dead-letter queue)"
	case r.Reason != "":
		status += " (" + r.Reason + ")"
	}
	return status
}

// rowPlace is the place name with its administrative areas, finest first,
// or the match of a vehicle or property result, which has no place.
func rowPlace(r resultRow) string {
	if r.Place == "" && r.Match != "" {
		return r.Match
	}
	var parts []string
	for _, p := range []string{r.Place, r.Admin2, r.Admin1} {
		if p != "" && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ", ")
}

func rowCoord(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 4, 64)
}

// rowSpread is the radius of a global-model result or the confidence (and
// camera heading) of a high-accuracy one.
func rowSpread(r resultRow) string {
	var s string
	switch {
	case r.RadiusKM != nil:
		s = strconv.FormatFloat(*r.RadiusKM, 'f', 1, 64) + " km"
	case r.Confidence != nil:
		s = "conf " + strconv.FormatFloat(*r.Confidence, 'f', 2, 64)
	default:
		return "-"
	}
	if r.HeadingDeg != nil {
		s += ", heading " + strconv.FormatFloat(*r.HeadingDeg, 'f', 0, 64) + "°"
	}
	return s
}

func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// GeoJSON (RFC 7946) output: a FeatureCollection of Points, coordinates in
// longitude, latitude order.
type (
	featureCollection struct {
		Type     string    `json:"type"`
		Features []feature `json:"features"`
	}
	feature struct {
		Type       string         `json:"type"`
		Geometry   any            `json:"geometry"` // pointGeometry or lineGeometry
		Properties map[string]any `json:"properties"`
	}
	pointGeometry struct {
		Type        string     `json:"type"`
		Coordinates [2]float64 `json:"coordinates"`
	}
	lineGeometry struct {
		Type        string       `json:"type"`
		Coordinates [][2]float64 `json:"coordinates"`
	}
)

// writeGeoJSON prints the succeeded records that carry coordinates. A
// prediction of a photo with an EXIF position adds two features: the EXIF
// point and a LineString from the prediction to it, carrying error_km, so a
// map shows how far off each prediction was. The "kind" property tells the
// three apart ("prediction", "exif", "error").
func writeGeoJSON(w io.Writer, records []ledger.Record) error {
	fc := featureCollection{Type: "FeatureCollection", Features: []feature{}}
	for i := range records {
		r := &records[i]
		if r.Status != ledger.StatusSucceeded || r.Latitude == nil || r.Longitude == nil {
			continue
		}
		props := map[string]any{
			"object":  "s3://" + r.Bucket + "/" + r.Key,
			"place":   r.Place,
			"admin2":  r.Admin2,
			"admin1":  r.Admin1,
			"country": r.CountryCode,
			"credits": r.CreditsConsumed,
		}
		if r.ModelID != "" {
			props["model_id"] = r.ModelID
		}
		if r.RadiusKM != nil {
			props["radius_km"] = *r.RadiusKM
		}
		if r.Confidence != nil {
			props["confidence"] = *r.Confidence
		}
		if r.HeadingDeg != nil {
			props["heading_deg"] = *r.HeadingDeg
		}
		if !r.UpdatedAt.IsZero() {
			props["updated_at"] = r.UpdatedAt.UTC().Format(time.RFC3339)
		}
		props["kind"] = "prediction"
		if r.Source == ledger.SourceEXIF {
			props["kind"] = "exif"
		}
		if r.Source != "" {
			props["source"] = r.Source
		}
		predicted := [2]float64{*r.Longitude, *r.Latitude}
		fc.Features = append(fc.Features, feature{
			Type:       "Feature",
			Geometry:   pointGeometry{Type: "Point", Coordinates: predicted},
			Properties: props,
		})
		if r.Source == ledger.SourceEXIF || r.ExifLatitude == nil || r.ExifLongitude == nil {
			continue
		}
		object := "s3://" + r.Bucket + "/" + r.Key
		exif := [2]float64{*r.ExifLongitude, *r.ExifLatitude}
		fc.Features = append(fc.Features, feature{
			Type:       "Feature",
			Geometry:   pointGeometry{Type: "Point", Coordinates: exif},
			Properties: map[string]any{"object": object, "kind": "exif", "captured_at": r.CapturedAt},
		})
		if r.PositionSent {
			// No error line: the upload carried the position, so the
			// distance says nothing about recognition.
			props["position_sent"] = true
			continue
		}
		line := map[string]any{"object": object, "kind": "error"}
		if r.ErrorKm != nil {
			line["error_km"] = *r.ErrorKm
			props["error_km"] = *r.ErrorKm
		}
		fc.Features = append(fc.Features, feature{
			Type:       "Feature",
			Geometry:   lineGeometry{Type: "LineString", Coordinates: [][2]float64{predicted, exif}},
			Properties: line,
		})
	}
	return writeIndentedJSON(w, fc)
}

// tableFromEnv is the TABLE_NAME fallback of --table.
func tableFromEnv(c *cli) string { return strings.TrimSpace(c.getenv(envvars.TableName)) }
