package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

// runPredict: geolocate predict [--model ID] [--top-n N] [--upload-metadata
// strip|keep] [--json] FILE...
func runPredict(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("predict", "FILE...")
	var (
		conn    connection
		modelID = fs.String("model", "", "model id (default: the service's default global model, recommended)")
		topN    = fs.Int("top-n", 0, "number of locations to return, 1 to 15 (default: the service's, 5)")
		asJSON  = fs.Bool("json", false, "print one JSON object per file")
		meta    = uploadMetadataFlag(fs, predictor.UploadMetadataStrip, "")
	)
	conn.register(fs)
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fs.Usage()
		return usageError{errors.New("no image file given")}
	}
	// Left out, --top-n is 0 and not sent: the service's default applies.
	// Typed, any value outside 1 to 15, 0 included, is refused here, before
	// any call: the client would otherwise take 0 for "not sent" and charge
	// for a default the user did not ask for.
	if flagGiven(fs, "top-n") && (*topN < geoapi.MinTopN || *topN > geoapi.MaxTopN) {
		return usageError{fmt.Errorf("--top-n %d is outside %d to %d: give how many locations you want, or leave --top-n out for the service's default (5)",
			*topN, geoapi.MinTopN, geoapi.MaxTopN)}
	}
	mode, err := meta.check(false)
	if err != nil {
		return err
	}
	client, err := conn.client(ctx, c, true)
	if err != nil {
		return err
	}

	total, succeeded, failed := 0, 0, 0
	for _, file := range files {
		if err := checkFile(file); err != nil {
			failed++
			c.printErr(fmt.Errorf("predict %s: %w", file, err))
			continue
		}
		in := &geoapi.PredictInput{Image: geoapi.FileSource(file), TopN: *topN, ModelID: *modelID}
		var stripped *strippedFile
		if mode == predictor.UploadMetadataStrip {
			if stripped, in.Size, err = newStrippedFile(file); err != nil {
				failed++
				c.printErr(fmt.Errorf("predict %s: %w", file, err))
				continue
			}
			if stripped != nil {
				in.Image = stripped.source
			}
		}
		out, err := client.Predict(ctx, in)
		if err != nil {
			failed++
			c.printErr(fmt.Errorf("predict %s: %w", file, describe(err)))
			if stopsTheBatch(err) || ctx.Err() != nil {
				break
			}
			continue
		}
		total += out.CreditsConsumed
		succeeded++
		sent := sentMetadata{Mode: mode}
		if stripped != nil {
			rep := stripped.removed()
			sent.Removed, sent.summary = rep.ByKind(), rep.String()
		}
		if *asJSON {
			err = writePredictionJSON(c.stdout, file, out, sent)
		} else {
			err = writePredictionTable(c.stdout, file, out, sent)
		}
		if err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	}
	if !*asJSON && succeeded > 0 {
		fmt.Fprintf(c.stdout, "credits consumed: %d\n", total)
	}
	if failed > 0 {
		return errReported
	}
	return nil
}

// checkFile gives a plain message for a path that cannot be an image file.
func checkFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("a folder: predict takes photo files (predict %s/*.jpg); make run IMAGES=%s sends a whole folder, subfolders included, through the local pipeline", path, path)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("not a regular file")
	}
	return nil
}

// stopsTheBatch reports errors that every remaining file would hit too, so
// the batch stops instead of repeating them.
func stopsTheBatch(err error) bool {
	var (
		unauthorized *geoapi.UnauthorizedError
		noCredits    *geoapi.OutOfCreditsError
		validation   *geoapi.ValidationError
	)
	return errors.As(err, &unauthorized) || errors.As(err, &noCredits) ||
		(errors.As(err, &validation) && validation.RetiredModelID != "")
}

// sentMetadata is what of the file's metadata the service received.
type sentMetadata struct {
	Mode    string           `json:"upload_metadata"`            // strip or keep
	Removed map[string]int64 `json:"metadata_removed,omitempty"` // kind -> bytes blanked
	summary string
}

func (m sentMetadata) String() string {
	if m.Mode == predictor.UploadMetadataKeep {
		return "metadata sent as stored (--upload-metadata keep)"
	}
	return "metadata removed before upload: " + m.summary
}

func writePredictionTable(w io.Writer, file string, out *geoapi.PredictOutput, sent sentMetadata) error {
	credits := fmt.Sprintf("%d credit(s)", out.CreditsConsumed)
	if out.CreditsInvalid != "" {
		credits = fmt.Sprintf("credits unknown (the service sent %s: %s)", out.CreditsReported, out.CreditsInvalid)
	}
	fmt.Fprintf(w, "%s: model %s, %s, prediction %s; %s\n", file, out.ModelID, credits, out.PredictionID, sent)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	switch out.Result.Type {
	case geoapi.ResultTypeCoordinates:
		fmt.Fprintln(tw, "RANK\tPLACE\tADMIN1\tCOUNTRY\tLAT\tLON\tRADIUS_KM")
		for i, cl := range out.Result.Clusters {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, cl.Location.Name, cl.Location.Admin1,
				cl.Location.CountryCode, coord(cl.Center.Latitude), coord(cl.Center.Longitude), num(cl.RadiusKM, 1))
		}
	case geoapi.ResultTypeAccuracy:
		fmt.Fprintln(tw, "RANK\tPLACE\tADMIN1\tCOUNTRY\tLAT\tLON\tCONFIDENCE")
		for i, p := range out.Result.Predictions {
			rank := p.Rank
			if rank == 0 {
				rank = i + 1
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", rank, p.Location.Name, p.Location.Admin1,
				p.Location.CountryCode, coord(p.Latitude), coord(p.Longitude), num(p.Confidence, 4))
		}
	default:
		// A result type the client does not know (vehicle, property, or a
		// new one): show it as the service sent it.
		fmt.Fprintf(tw, "result type %q has no table; raw result:\n%s\n", out.Result.Type, out.Result.Raw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

func coord(v float64) string         { return strconv.FormatFloat(v, 'f', 4, 64) }
func num(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// predictionJSON is the --json output: the envelope's fields, the best
// location flattened, and the prediction exactly as the service sent it.
type predictionJSON struct {
	File            string `json:"file"`
	PredictionID    string `json:"prediction_id"`
	ModelID         string `json:"model_id"`
	CreditsConsumed int    `json:"credits_consumed"`
	// CreditsReported and CreditsInvalid: a credits_consumed that could not
	// be a charge, as sent, and why (geoapi.PredictOutput).
	CreditsReported string          `json:"credits_reported,omitempty"`
	CreditsInvalid  string          `json:"credits_invalid,omitempty"`
	ResultType      string          `json:"result_type"`
	Top             *topJSON        `json:"top,omitempty"`
	Attempts        int             `json:"attempts"`
	Prediction      json.RawMessage `json:"prediction"`
	sentMetadata
}

type topJSON struct {
	Name        string   `json:"name"`
	Admin1      string   `json:"admin1,omitempty"`
	Admin2      string   `json:"admin2,omitempty"`
	CountryCode string   `json:"country_code,omitempty"`
	Latitude    float64  `json:"latitude"`
	Longitude   float64  `json:"longitude"`
	RadiusKM    *float64 `json:"radius_km,omitempty"`
	Confidence  *float64 `json:"confidence,omitempty"`
}

func writePredictionJSON(w io.Writer, file string, out *geoapi.PredictOutput, sent sentMetadata) error {
	v := predictionJSON{
		File:            file,
		PredictionID:    out.PredictionID.String(),
		ModelID:         out.ModelID,
		CreditsConsumed: out.CreditsConsumed,
		CreditsReported: out.CreditsReported,
		CreditsInvalid:  out.CreditsInvalid,
		ResultType:      out.Result.Type,
		Attempts:        out.Attempts,
		Prediction:      out.Result.Raw,
		sentMetadata:    sent,
	}
	if top, ok := out.Result.Top(); ok {
		v.Top = &topJSON{Name: top.Name, Admin1: top.Admin1, Admin2: top.Admin2, CountryCode: top.CountryCode,
			Latitude: top.Latitude, Longitude: top.Longitude, RadiusKM: top.RadiusKM, Confidence: top.Confidence}
	}
	return json.NewEncoder(w).Encode(v)
}
