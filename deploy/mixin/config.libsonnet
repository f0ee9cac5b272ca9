{
  _config+:: {
    // runbook_url of every alert: this prefix + the alert's name + '.md'.
    // The default is the repository path of the runbooks; point it at the
    // rendered docs (e.g. a Git forge's blob URL of docs/runbooks/).
    runbookURLPrefix: 'docs/runbooks/',
    // Recording rules' evaluation interval.
    recordingInterval: '1m',
  },
}
