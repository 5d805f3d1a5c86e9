// Command image builds toolwarden's container image without a container
// daemon or registry, as a tarball that `docker load`, `podman load` or
// crane read:
//
//	go run ./scripts/image -binary dist/toolwarden_linux_amd64_v1/toolwarden \
//	  -platform linux/amd64 -version 0.1.0 -o toolwarden_linux_amd64.image.tar
//
// The base is built here from nothing (go-containerregistry's empty image)
// to the layout of distroless/static's :nonroot variant, because this
// project's machines cannot pull gcr.io/distroless: passwd and group with
// the nonroot user (65532), the host's CA bundle, a sticky /tmp and the
// nonroot home. The release (.goreleaser.yaml, kos) uses the real
// distroless image instead; both run the same static binary as 65532.
package main

import (
	"archive/tar"
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

//go:embed config.yaml
var configYAML []byte

// The image's fixed facts, which the test checks.
const (
	binaryPath = "/usr/bin/toolwarden"
	configPath = "/etc/toolwarden/config.yaml"
	auditDir   = "/var/lib/toolwarden"
	workspace  = "/workspace"
	nonroot    = 65532
	user       = "65532:65532"
)

// options of one build.
type options struct {
	binary, platform, version, commit, tag, out, caBundle string
	created                                               time.Time
}

func main() {
	var o options
	var created string
	flag.StringVar(&o.binary, "binary", "", "the static toolwarden binary for the platform (CGO_ENABLED=0)")
	flag.StringVar(&o.platform, "platform", "linux/amd64", "OS/ARCH of the binary")
	flag.StringVar(&o.version, "version", "dev", "version label")
	flag.StringVar(&o.commit, "commit", "", "commit label")
	flag.StringVar(&o.tag, "tag", "toolwarden:dev", "the image name the tarball carries")
	flag.StringVar(&o.out, "o", "toolwarden.image.tar", "tarball to write")
	flag.StringVar(&o.caBundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "CA certificates to put in the image (empty: none)")
	flag.StringVar(&created, "created", "1970-01-01T00:00:00Z", "creation time (RFC 3339); fixed so that builds are reproducible")
	flag.Parse()
	t, err := time.Parse(time.RFC3339, created)
	if err == nil {
		o.created = t
		err = write(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// write builds the image and writes it as a tarball.
func write(o options) error {
	img, err := build(o)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(o.tag)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(o.out, ref, img)
}

// build stacks the base layer and the application layer on an empty
// image and sets the configuration: entrypoint, non-root user, labels.
func build(o options) (v1.Image, error) {
	osName, arch, ok := strings.Cut(o.platform, "/")
	if !ok || osName != "linux" {
		return nil, fmt.Errorf("platform %q: want linux/ARCH", o.platform)
	}
	base, err := baseLayer(o.caBundle, o.created)
	if err != nil {
		return nil, err
	}
	app, err := appLayer(o.binary, o.created)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, base, app)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = osName, arch, v1.Time{Time: o.created}
	cf.Config = imageConfig(o)
	return mutate.ConfigFile(img, cf)
}

// imageConfig: `serve` over stdio as 65532, the configuration found
// through XDG_CONFIG_HOME, and a working directory that holds no
// toolwarden.yaml (the workspace could, and ./toolwarden.yaml wins).
func imageConfig(o options) v1.Config {
	return v1.Config{
		Entrypoint: []string{binaryPath},
		Cmd:        []string{"serve"},
		User:       user,
		WorkingDir: "/",
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin",
			"HOME=/home/nonroot",
			"XDG_CONFIG_HOME=/etc",
			"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
		},
		Volumes: map[string]struct{}{auditDir: {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":     "toolwarden",
			"org.opencontainers.image.version":   o.version,
			"org.opencontainers.image.revision":  o.commit,
			"org.opencontainers.image.source":    "https://github.com/toolwarden/toolwarden",
			"org.opencontainers.image.licenses":  "Apache-2.0",
			"org.opencontainers.image.base.name": "scratch (distroless/static:nonroot layout, built by scripts/image)",
		},
	}
}

// entry is one file or directory of a layer.
type entry struct {
	path     string
	mode     int64
	uid      int
	data     []byte
	dir      bool
	fromFile string
}

func baseLayer(caBundle string, mtime time.Time) (v1.Layer, error) {
	entries := []entry{
		{path: "etc/", mode: 0o755, dir: true},
		{path: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{path: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n")},
		{path: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{path: "home/", mode: 0o755, dir: true},
		{path: "home/nonroot/", mode: 0o700, uid: nonroot, dir: true},
		{path: "root/", mode: 0o700, dir: true},
		{path: "tmp/", mode: 0o1777, dir: true},
		{path: "var/", mode: 0o755, dir: true},
		{path: "var/lib/", mode: 0o755, dir: true},
		{path: strings.TrimPrefix(auditDir, "/") + "/", mode: 0o700, uid: nonroot, dir: true},
		{path: strings.TrimPrefix(workspace, "/") + "/", mode: 0o755, dir: true},
	}
	if caBundle != "" {
		entries = append(entries,
			entry{path: "etc/ssl/", mode: 0o755, dir: true},
			entry{path: "etc/ssl/certs/", mode: 0o755, dir: true},
			entry{path: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, fromFile: caBundle})
	}
	return layer(entries, mtime)
}

func appLayer(binary string, mtime time.Time) (v1.Layer, error) {
	if binary == "" {
		return nil, fmt.Errorf("-binary is required")
	}
	return layer([]entry{
		{path: "usr/", mode: 0o755, dir: true},
		{path: "usr/bin/", mode: 0o755, dir: true},
		{path: strings.TrimPrefix(binaryPath, "/"), mode: 0o755, fromFile: binary},
		{path: "etc/toolwarden/", mode: 0o755, dir: true},
		{path: strings.TrimPrefix(configPath, "/"), mode: 0o644, data: configYAML},
	}, mtime)
}

// layer writes entries as one tar layer with fixed times and owners, so
// the same inputs give the same digest.
func layer(entries []entry, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		data := e.data
		if e.fromFile != "" {
			var err error
			if data, err = os.ReadFile(e.fromFile); err != nil {
				return nil, err
			}
		}
		h := &tar.Header{Name: e.path, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: mtime, Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}
