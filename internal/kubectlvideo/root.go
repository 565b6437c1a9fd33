/*
Copyright 2026 The video-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package kubectlvideo

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Env is what every command runs with: the streams, a client of the cluster and the
// namespace, as kubectl resolved them from the kubeconfig and the flags.
type Env struct {
	In          io.Reader
	Out, ErrOut io.Writer

	Client        client.Client
	Namespace     string
	AllNamespaces bool

	// HTTP fetches thumbnails and outputs: they are public URLs of the service, fetched
	// without the API key.
	HTTP *http.Client
	// Now is the clock, for ages and expiries.
	Now func() time.Time
	// Open shows a file to the user (preview --open).
	Open func(path string) error
	// Terminal says whether In is a terminal a person answers on: questions before paying are
	// asked only there, never answered by a pipe or a file.
	Terminal bool

	// connect builds Client and Namespace from the flags. Commands get them ready-made; shell
	// completion, which runs no pre-run hook, calls it itself.
	connect func() error
}

// Overrides replace what the command would otherwise build from the kubeconfig; tests set them.
type Overrides struct {
	// Client, when set, is used instead of one built from the kubeconfig flags.
	Client client.Client
	// Namespace is the namespace when Client is set and -n is not given.
	Namespace string
	HTTP      *http.Client
	Now       func() time.Time
	Open      func(path string) error
	// IsTerminal replaces the check that standard input is a terminal.
	IsTerminal func(in io.Reader) bool
}

// Scheme holds the kinds the plugin reads: the video kinds, events, namespaces (for the
// completion of -n), and the self subject access reviews approve asks before it writes.
func Scheme() (*k8sruntime.Scheme, error) {
	s := k8sruntime.NewScheme()
	for _, add := range []func(*k8sruntime.Scheme) error{videov1alpha1.AddToScheme, eventsv1.AddToScheme, corev1.AddToScheme, authorizationv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("building the scheme: %w", err)
		}
	}
	return s, nil
}

// kubeconfigFlags are kubectl's connection flags (--kubeconfig, -n, --context, --cluster,
// --user, -s, --token, --as, ...), read by client-go's clientcmd as kubectl reads them.
// cli-runtime's ConfigFlags would bind the same flags to the same loader, but links kustomize
// and the resource builder: half of the binary for nothing the plugin uses.
type kubeconfigFlags struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides clientcmd.ConfigOverrides
}

func addKubeconfigFlags(fs *pflag.FlagSet) *kubeconfigFlags {
	k := &kubeconfigFlags{rules: clientcmd.NewDefaultClientConfigLoadingRules()}
	fs.StringVar(&k.rules.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "", "Path to the kubeconfig file to use for CLI requests.")
	names := clientcmd.RecommendedConfigOverrideFlags("")
	names.ClusterOverrideFlags.APIServer.ShortName = "s" // kubectl's -s
	clientcmd.BindOverrideFlags(&k.overrides, fs, names)
	return k
}

// clientConfig is the kubeconfig as the flags select it ($KUBECONFIG, ~/.kube/config, or
// --kubeconfig; then --context, -n and the other overrides).
func (k *kubeconfigFlags) clientConfig() clientcmd.ClientConfig {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(k.rules, &k.overrides)
}

// NewCommand returns `kubectl video` with its subcommands. The kubeconfig flags are kubectl's
// own (-n, --context, --kubeconfig, ...), so the plugin talks to the cluster kubectl would.
func NewCommand(in io.Reader, out, errOut io.Writer, ov Overrides) *cobra.Command {
	var flags *kubeconfigFlags
	env := &Env{In: in, Out: out, ErrOut: errOut}
	root := &cobra.Command{
		// The binary's name: cobra names the completion scripts after it (a script registered
		// for "kubectl" would replace kubectl's own). Help shows the display name below.
		Use:         "kubectl-video",
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl video"},
		Short:       "Review, approve and follow the videos of video-operator",
		Long: "kubectl video works with VideoStoryboard (vsb), VideoRender (vr) and VideoBudget (vb) objects:\n" +
			"  status             one screen with phase, conditions, job, submission, outputs and events (-o yaml|json)\n" +
			"  preview            a storyboard preview as a contact sheet (text, or a self-contained HTML file)\n" +
			"  render             create the VideoRender of a reviewed storyboard, after confirmation\n" +
			"  retry              ask for a new job after a failed one\n" +
			"  confirm-resubmit   confirm that a submission whose outcome is unknown may be sent again\n" +
			"  outputs            list and download the files of a finished render (-o yaml|json)\n" +
			"  completion         the shell completion script (bash, zsh, fish, powershell)\n" +
			"  version            the plugin's version",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if !needsCluster(cmd) {
				return nil
			}
			if env.AllNamespaces && (cmd.Name() != "status" || len(args) > 0) {
				return fmt.Errorf("-A (--all-namespaces) only lists, with kubectl video status and no object; "+
					"an object is named in one namespace: use -n NAMESPACE with kubectl video %s", cmd.Name())
			}
			return env.complete(flags, ov)
		},
	}
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	flags = addKubeconfigFlags(root.PersistentFlags())
	env.connect = func() error { return env.complete(flags, ov) }
	root.PersistentFlags().BoolVarP(&env.AllNamespaces, "all-namespaces", "A", false, "with status and no object: list the videos of every namespace")
	root.AddCommand(newStatusCommand(env), newPreviewCommand(env), newRenderCommand(env),
		newRetryCommand(env), newConfirmResubmitCommand(env), newOutputsCommand(env), newApproveCommand(env),
		newVersionCommand(env))
	addCompletion(root, env)
	return root
}

// complete builds the client and resolves the namespace, from the overrides or the kubeconfig.
func (e *Env) complete(flags *kubeconfigFlags, ov Overrides) error {
	e.HTTP, e.Now, e.Open = ov.HTTP, ov.Now, ov.Open
	if e.HTTP == nil {
		e.HTTP = newHTTPClient()
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	if e.Open == nil {
		e.Open = openInBrowser
	}
	isTerminal := ov.IsTerminal
	if isTerminal == nil {
		isTerminal = isTerminalFile
	}
	e.Terminal = isTerminal(e.In)
	if ov.Client != nil {
		e.Client, e.Namespace = ov.Client, ov.Namespace
		if ns := flags.overrides.Context.Namespace; ns != "" {
			e.Namespace = ns
		}
		return nil
	}
	kc := flags.clientConfig()
	cfg, err := kc.ClientConfig()
	if err != nil {
		return fmt.Errorf("reading the kubeconfig: %w", err)
	}
	ns, _, err := kc.Namespace()
	if err != nil {
		return fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("connecting to the cluster: %w", err)
	}
	// Strict validation, as kubectl: an unknown field is an error, not silently dropped.
	e.Client, e.Namespace = client.WithFieldValidation(c, metav1.FieldValidationStrict), ns
	return nil
}

// newHTTPClient fetches thumbnails and outputs. It has no overall timeout, which would cut a
// long video on a slow link: each fetch bounds itself (thumbnails in total, downloads when no
// data arrives for a while).
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = time.Minute
	return &http.Client{Transport: t}
}

// isTerminalFile is true when in is a file that is a terminal.
func isTerminalFile(in io.Reader) bool {
	f, ok := in.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// openInBrowser opens a file with $BROWSER, or the desktop's opener.
func openInBrowser(path string) error {
	name := "xdg-open"
	switch {
	case os.Getenv("BROWSER") != "":
		name = os.Getenv("BROWSER")
	case runtime.GOOS == "darwin":
		name = "open"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The opener is the user's own choice ($BROWSER) or the platform's; the path is ours.
	if err := exec.CommandContext(ctx, name, path).Start(); err != nil { //nolint:gosec
		return fmt.Errorf("opening %s with %s (set $BROWSER to choose a browser): %w", path, name, err)
	}
	return nil
}
