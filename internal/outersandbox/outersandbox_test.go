package outersandbox

import (
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestDetectRecognisesSrtOnly(t *testing.T) {
	o, ok := Detect(env(map[string]string{"SANDBOX_RUNTIME": "1"}))
	if !ok || !strings.Contains(o.Name, "srt") || !strings.Contains(o.Nested, "allowNestedUserNamespaces") {
		t.Fatalf("Detect under srt = %+v, %v", o, ok)
	}
	if w := o.Write("/home/u/.local/state/toolwarden", "audit.path"); !strings.Contains(w, `"/home/u/.local/state/toolwarden"`) || !strings.Contains(w, "audit.path") {
		t.Errorf("Write does not name the directory and the setting: %s", w)
	}
	for _, kv := range []map[string]string{{}, {"SANDBOX_RUNTIME": "0"}, {"IS_SANDBOX": "yes"}} {
		if _, ok := Detect(env(kv)); ok {
			t.Errorf("Detect(%v) found an outer sandbox", kv)
		}
	}
}

func TestWriteRefused(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&fs.PathError{Op: "mkdir", Path: "/x", Err: syscall.EROFS}, true},
		{fmt.Errorf("audit log: %w", &fs.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}), true},
		{os.ErrNotExist, false},
		{&fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOSPC}, false},
	} {
		if got := WriteRefused(c.err); got != c.want {
			t.Errorf("WriteRefused(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
