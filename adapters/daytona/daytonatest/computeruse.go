package daytonatest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// Computer use. The daemon serves its desktop routes through a plugin
// that loads only where the sandbox has X11; no sandbox here has a
// desktop, so every plugin route answers the 503 the daemon answers
// without the plugin. Screen recordings are the daemon's own, served
// whether or not the plugin loaded, and are served here as it serves
// them: ffmpeg from the sandbox's PATH, writing MP4 files under
// ~/.daytona/recordings, which the listing reads back.

// computerUsePluginRoutes are the routes the plugin serves.
var computerUsePluginRoutes = []string{
	"GET /computeruse/status", "POST /computeruse/start", "POST /computeruse/stop",
	"GET /computeruse/process-status", "GET /computeruse/process/{name}/status",
	"POST /computeruse/process/{name}/restart", "GET /computeruse/process/{name}/logs",
	"GET /computeruse/process/{name}/errors",
	"GET /computeruse/screenshot", "GET /computeruse/screenshot/region",
	"GET /computeruse/screenshot/compressed", "GET /computeruse/screenshot/region/compressed",
	"GET /computeruse/mouse/position", "POST /computeruse/mouse/move", "POST /computeruse/mouse/click",
	"POST /computeruse/mouse/drag", "POST /computeruse/mouse/scroll",
	"POST /computeruse/keyboard/type", "POST /computeruse/keyboard/key", "POST /computeruse/keyboard/hotkey",
	"GET /computeruse/display/info", "GET /computeruse/display/windows",
	"GET /computeruse/a11y/tree", "POST /computeruse/a11y/find", "POST /computeruse/a11y/node/focus",
	"POST /computeruse/a11y/node/invoke", "POST /computeruse/a11y/node/value",
}

// noComputerUse is the daemon's answer on a plugin route while the plugin
// is not loaded.
func noComputerUse(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusServiceUnavailable, map[string]string{
		"message":  "Computer-use functionality is not available",
		"details":  "The computer-use plugin is still loading or failed to initialize.",
		"solution": "Retry shortly. If the problem persists, check the daemon logs for specific error details.",
	})
}

// recordingsDir is where the daemon keeps its recordings: under its
// configuration directory in daytona's home.
const recordingsDir = home + "/.daytona/recordings"

// recordingLabelMax and recordingLabel are the daemon's rules for a
// recording's label.
const recordingLabelMax = 100

var recordingLabel = regexp.MustCompile(`^[A-Za-z0-9.\s_-]+$`)

const invalidLabel = "invalid label: must be 1-100 characters, cannot start with dot, cannot contain path separators (/ or \\), and can only contain letters, numbers, spaces, dots, underscores, and hyphens"

// recording is one screen recording as the daemon describes it.
type recording struct {
	ID              string     `json:"id"`
	FileName        string     `json:"fileName"`
	FilePath        string     `json:"filePath"`
	StartTime       time.Time  `json:"startTime"`
	EndTime         *time.Time `json:"endTime,omitempty"`
	Status          string     `json:"status"`
	DurationSeconds *float64   `json:"durationSeconds,omitempty"`
	SizeBytes       *int64     `json:"sizeBytes,omitempty"`
}

// activeRecording is a recording whose ffmpeg runs.
type activeRecording struct {
	rec   *recording
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{} // closed once ffmpeg has been reaped
}

// validLabel reports whether label is one the daemon accepts.
func validLabel(label string) bool {
	trimmed := strings.TrimSpace(label)
	return trimmed != "" && len(label) <= recordingLabelMax && !strings.ContainsAny(label, `/\`) &&
		!strings.HasPrefix(trimmed, ".") && recordingLabel.MatchString(label)
}

// recordingError answers the recording routes' error body.
func recordingError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// startRecording is POST /computeruse/recordings/start {label}: ffmpeg
// grabbing the display into a new MP4, answered 201 with the recording;
// 400 without ffmpeg (checked before the label) or for a label the daemon
// refuses.
func (s *Server) startRecording(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Label *string `json:"label"`
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil {
		req.Label = nil
	}
	sb := sandboxOf(r)
	if err := sb.space.MkdirAll(recordingsDir, 0o755, daytona); err != nil {
		recordingError(w, http.StatusInternalServerError, sb.seen("failed to create recordings directory: "+err.Error()))
		return
	}
	ffmpeg, err := sb.space.LookPath("ffmpeg", os.Getenv("PATH"), home)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "ffmpeg_not_found",
			"message": "FFmpeg must be installed and available in PATH to use screen recording"})
		return
	}
	label := ""
	if req.Label != nil {
		label = *req.Label
	}
	if label != "" && !validLabel(label) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_label", "message": invalidLabel})
		return
	}
	id, now := uuid.NewString(), time.Now().UTC()
	if label == "" {
		label = "session"
	}
	name := fmt.Sprintf("%s_%s_%s.mp4", id, label, now.Format("20060102_150405"))
	rec := &recording{ID: id, FileName: name, FilePath: path.Join(recordingsDir, name), StartTime: now, Status: "recording"}
	cmd, err := sb.space.Command(home, daytona, ffmpeg, "-f", "x11grab", "-framerate", "30", "-i", ":0",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-y", rec.FilePath)
	var stdin io.WriteCloser
	if err == nil {
		cmd.Env = append(sb.daytonaEnv(), "DISPLAY=:0")
		stdin, err = cmd.StdinPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		recordingError(w, http.StatusInternalServerError, sb.seen("failed to start ffmpeg: "+err.Error()))
		return
	}
	active := &activeRecording{rec: rec, cmd: cmd, stdin: stdin, done: make(chan struct{})}
	sb.smu.Lock()
	sb.recordings[id] = active
	sb.smu.Unlock()
	s.Go(func() {
		err := cmd.Wait()
		sb.smu.Lock()
		if sb.recordings[id] == active { // ended by itself, not stopped
			delete(sb.recordings, id)
			if err != nil {
				rec.Status = "failed"
			}
		}
		sb.smu.Unlock()
		close(active.done)
	})
	writeJSON(w, http.StatusCreated, rec)
}

// stopRecording is POST /computeruse/recordings/stop {id}: ffmpeg asked
// to finish ("q" on its stdin), killed after 10 s, and the recording
// answered completed with its duration and size.
func (s *Server) stopRecording(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID string `json:"id"`
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil || req.ID == "" {
		recordingError(w, http.StatusBadRequest, "invalid request: id is required")
		return
	}
	sb := sandboxOf(r)
	sb.smu.Lock()
	active := sb.recordings[req.ID]
	delete(sb.recordings, req.ID)
	sb.smu.Unlock()
	if active == nil {
		recordingError(w, http.StatusNotFound, "recording not found")
		return
	}
	_, _ = io.WriteString(active.stdin, "q")
	_ = active.stdin.Close()
	select {
	case <-active.done:
	case <-time.After(10 * time.Second):
		_ = stubproc.SignalGroup(active.cmd.Process.Pid, syscall.SIGKILL)
		<-active.done
	}
	rec := active.rec
	end := time.Now().UTC()
	duration := end.Sub(rec.StartTime).Seconds()
	rec.EndTime, rec.Status, rec.DurationSeconds = &end, "completed", &duration
	if host, err := sb.space.Path(rec.FilePath); err == nil {
		if info, err := os.Stat(host); err == nil {
			size := info.Size()
			rec.SizeBytes = &size
		}
	}
	writeJSON(w, http.StatusOK, rec)
}

// recordings are the sandbox's recordings as the daemon lists them: those
// recording, then each MP4 file of the recordings directory (by name)
// that is not being recorded, completed, its times the file's.
func (sb *sandbox) recordingList() ([]recording, error) {
	sb.smu.Lock()
	var all []recording
	busy := map[string]bool{} // the files being recorded
	for _, a := range sb.recordings {
		all = append(all, *a.rec)
		busy[a.rec.FileName] = true
	}
	sb.smu.Unlock()
	dir, err := sb.space.Path(recordingsDir)
	if err != nil {
		return all, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return all, nil
	}
	if err != nil {
		return nil, errors.New(sb.seen("failed to read recordings directory: " + err.Error()))
	}
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".mp4" || busy[e.Name()] {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		p := path.Join(recordingsDir, e.Name())
		id := ""
		if prefix, _, ok := strings.Cut(e.Name(), "_"); ok && prefix != "" {
			if _, err := uuid.Parse(prefix); err == nil {
				id = prefix
			}
		}
		if id == "" { // a file the daemon did not name: an id from its path
			id = uuid.NewSHA1(uuid.NameSpaceURL, []byte(p)).String()
		}
		mod, size := info.ModTime().UTC(), info.Size()
		all = append(all, recording{ID: id, FileName: e.Name(), FilePath: p, StartTime: mod, EndTime: &mod,
			Status: "completed", SizeBytes: &size})
	}
	return all, nil
}

// findRecording is recording id, from those recording first; nil when
// there is none.
func (sb *sandbox) findRecording(id string) (*recording, error) {
	sb.smu.Lock()
	if a := sb.recordings[id]; a != nil {
		rec := *a.rec
		sb.smu.Unlock()
		return &rec, nil
	}
	sb.smu.Unlock()
	all, err := sb.recordingList()
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].ID == id {
			return &all[i], nil
		}
	}
	return nil, nil
}

// listRecordings is GET /computeruse/recordings: {recordings}.
func (s *Server) listRecordings(w http.ResponseWriter, r *http.Request) {
	all, err := sandboxOf(r).recordingList()
	if err != nil {
		recordingError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if all == nil {
		all = []recording{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"recordings": all})
}

// recordingOf answers the routes naming a recording by id: nil once it
// has answered 404 or 500.
func recordingOf(w http.ResponseWriter, r *http.Request) *recording {
	rec, err := sandboxOf(r).findRecording(r.PathValue("id"))
	switch {
	case err != nil:
		recordingError(w, http.StatusInternalServerError, err.Error())
	case rec == nil:
		recordingError(w, http.StatusNotFound, "recording not found")
	}
	return rec
}

// getRecording is GET /computeruse/recordings/{id}.
func (s *Server) getRecording(w http.ResponseWriter, r *http.Request) {
	if rec := recordingOf(w, r); rec != nil {
		writeJSON(w, http.StatusOK, rec)
	}
}

// deleteRecording is DELETE /computeruse/recordings/{id}: 204 once its
// file is gone; 400 while it records.
func (s *Server) deleteRecording(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	sb.smu.Lock()
	active := sb.recordings[r.PathValue("id")] != nil
	sb.smu.Unlock()
	if active {
		recordingError(w, http.StatusBadRequest, "cannot delete an active recording, stop it first")
		return
	}
	rec := recordingOf(w, r)
	if rec == nil {
		return
	}
	host, err := sb.space.Path(rec.FilePath)
	if err == nil {
		err = os.Remove(host)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		recordingError(w, http.StatusNotFound, "recording not found")
	case err != nil:
		recordingError(w, http.StatusInternalServerError, sb.seen("failed to delete recording file: "+err.Error()))
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// downloadRecording is GET /computeruse/recordings/{id}/download: the
// file, served as a static file is (ranges, its type by extension).
func (s *Server) downloadRecording(w http.ResponseWriter, r *http.Request) {
	rec := recordingOf(w, r)
	if rec == nil {
		return
	}
	host, err := sandboxOf(r).space.Path(rec.FilePath)
	if err == nil {
		_, err = os.Stat(host)
	}
	if err != nil {
		recordingError(w, http.StatusNotFound, "file not found")
		return
	}
	http.ServeFile(w, r, host)
}

// stopRecordings kills the ffmpeg of every recording (the daemon went
// away with its sandbox).
func (sb *sandbox) stopRecordings() {
	for _, a := range takeAll(&sb.smu, &sb.recordings) {
		_ = stubproc.SignalGroup(a.cmd.Process.Pid, syscall.SIGKILL)
		<-a.done
	}
}
