;;; runls-test.el --- headless test of runls through Eglot  -*- lexical-binding: t; -*-

;; Run by editors/emacs/scripts/test.sh: emacs --batch -l runls-test.el with
;; RUNLS_TEST_BIN (the runls binary), RUNLS_TEST_RUN (a copy of the sample
;; run) and RUNLS_TEST_CHECK (what `runls check' printed for it, run from
;; the run folder). Starts Eglot on a record file of the run and checks that
;; the project is the run folder, that the diagnostics of every record file
;; `runls check' names are those it prints, that imenu lists the records,
;; that hover gives a record's facts, that xref finds workspace symbols and
;; that run/info names the run folder. Prints "N passed, N failed" last.

;;; Code:

(require 'cl-lib)
(let ((here (file-name-directory (or load-file-name buffer-file-name))))
  (load (expand-file-name "load-eglot.el" here))
  (load (expand-file-name "../runls.el" here)))

(defvar runls-test-passed 0)
(defvar runls-test-failed 0)

(defun runls-test-check (ok what &rest args)
  "Count OK; say WHAT (formatted with ARGS) when it fails."
  (if ok
      (cl-incf runls-test-passed)
    (cl-incf runls-test-failed)
    (message "FAIL: %s" (apply #'format what args)))
  ok)

(defun runls-test-wait (pred seconds)
  "Wait up to SECONDS for PRED to return non-nil; return its value."
  (let ((deadline (+ (float-time) seconds)) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.1))
    v))

(defvar runls-test-bin (getenv "RUNLS_TEST_BIN"))
(defvar runls-test-run (file-name-as-directory (getenv "RUNLS_TEST_RUN")))
(setq runls-program runls-test-bin)
(setq eglot-sync-connect 30 eglot-connect-timeout 60 eglot-autoshutdown nil)

(defun runls-test-check-lines ()
  "`runls check''s lines, as (FILE LINE COLUMN KIND MESSAGE CODE)."
  (with-temp-buffer
    (insert-file-contents (getenv "RUNLS_TEST_CHECK"))
    (let (out)
      (goto-char (point-min))
      (while (re-search-forward "^\\([^:\n]+\\):\\([0-9]+\\):\\([0-9]+\\): \\([a-z]+\\): \\(.*\\) \\[\\([a-z-]+\\)\\]$" nil t)
        (push (list (match-string 1) (string-to-number (match-string 2)) (string-to-number (match-string 3))
                    (match-string 4) (match-string 5) (match-string 6))
              out))
      (nreverse out))))

(defun runls-test-flymake-lines ()
  "The current buffer's Flymake diagnostics, as (LINE COLUMN KIND MESSAGE CODE)."
  (sort
   (mapcar (lambda (d)
             (let* ((beg (flymake-diagnostic-beg d))
                    (text (flymake-diagnostic-text d))
                    (kind (pcase (flymake-diagnostic-type d)
                            ('eglot-error "error") ('eglot-warning "warning") (_ "note")))
                    code message)
               ;; Eglot writes "SOURCE [CODE]: MESSAGE".
               (when (string-match "\\`runls \\[\\([a-z-]+\\)\\]: \\(\\(?:.\\|\n\\)*\\)\\'" text)
                 (setq code (match-string 1 text) message (match-string 2 text)))
               (list (line-number-at-pos beg) (save-excursion (goto-char beg) (1+ (current-column)))
                     kind message code)))
           (flymake-diagnostics))
   (lambda (a b) (< (car a) (car b)))))

(let* ((first (expand-file-name "episode-2/bob/bob.log" runls-test-run))
       (buf (find-file-noselect first)))
  (with-current-buffer buf
    (runls-test-check (eq major-mode 'runls-log-mode) "major mode of %s: %s" first major-mode)
    (runls-test-check (equal (project-root (project-current)) runls-test-run)
                      "project root %s, want the run folder %s" (project-root (project-current)) runls-test-run)
    (apply #'eglot (eglot--guess-contact))
    (runls-test-check (eglot-current-server) "no Eglot server for %s" first)))

;; Diagnostics: every record file runls check names, visited, shows what it prints.
(let ((want (runls-test-check-lines)) (files nil))
  (runls-test-check (> (length want) 3) "runls check printed %d lines" (length want))
  (dolist (w want) (cl-pushnew (car w) files :test #'equal))
  (dolist (file (nreverse files))
    (let* ((path (expand-file-name file runls-test-run))
           (expected (cl-loop for w in want when (equal (car w) file)
                              collect (list (nth 1 w) (nth 2 w)
                                            (pcase (nth 3 w) ("warning" "warning") (_ "note"))
                                            (nth 4 w) (nth 5 w)))))
      (with-current-buffer (find-file-noselect path)
        (runls-test-check (eglot-managed-p) "%s is not managed by Eglot" file)
        ;; Flymake runs its backends on timers that a batch Emacs may not
        ;; fire: start it by hand until Eglot's report arrives.
        (let ((got (runls-test-wait (lambda ()
                                      (flymake-start)
                                      (let ((d (runls-test-flymake-lines))) (and (= (length d) (length expected)) d)))
                                    20)))
          (runls-test-check (equal got expected) "%s: diagnostics\n got %S\nwant %S" file (runls-test-flymake-lines) expected))))))

;; imenu: the records of a file, grouped by kind and conversation run.
(with-current-buffer (find-file-noselect (expand-file-name "episode-2/bob/bob.log" runls-test-run))
  (let* ((index (funcall imenu-create-index-function))
         (names nil))
    (cl-labels ((walk (items) (dolist (it items)
                                (if (imenu--subalist-p it) (walk (cdr it)) (push (car it) names)))))
      (walk index))
    (runls-test-check (cl-some (lambda (n) (string-match-p "18:01:02 Bob migration dry-run failed" n)) names)
                      "imenu lacks the ERROR record: %S" names)
    (runls-test-check (>= (length names) 6) "imenu lists %d entries" (length names)))
  ;; hover on the ERROR record (line 3): its facts.
  (goto-char (point-min))
  (forward-line 2)
  (let* ((server (eglot--current-server-or-lose))
         (hover (jsonrpc-request server :textDocument/hover (eglot--TextDocumentPositionParams)))
         (contents (plist-get hover :contents))
         (text (if (stringp contents) contents (plist-get contents :value))))
    (runls-test-check (and text (string-match-p "ERROR" text) (string-match-p "evidence: " text)
                           (string-match-p "conv-1" text))
                      "hover: %S" hover)
    ;; Eglot 1.9 without markdown-mode takes plain text.
    (unless (fboundp 'gfm-view-mode)
      (runls-test-check (equal (plist-get contents :kind) "plaintext") "hover kind %S to a plain-text client" (plist-get contents :kind)))
    ;; run/info: the folder served is the run folder.
    (let ((info (jsonrpc-request server :run/info (make-hash-table))))
      (runls-test-check (equal (file-name-as-directory (eglot--uri-to-path (plist-get info :root))) runls-test-run)
                        "run/info root %S, want %s" (plist-get info :root) runls-test-run))
    ;; xref: workspace symbols.
    (let ((syms (jsonrpc-request server :workspace/symbol '(:query "migration"))))
      (runls-test-check (> (length syms) 0) "workspace/symbol found nothing")
      (runls-test-check (cl-every (lambda (s) (string-prefix-p (eglot--path-to-uri runls-test-run)
                                                               (plist-get (plist-get s :location) :uri)))
                                  syms)
                        "workspace/symbol locations outside the run: %S" syms))))

;; A file of another episode, opened from its agent folder, joins the same server.
(with-current-buffer (find-file-noselect (expand-file-name "episode-3/alice/alice.log" runls-test-run))
  (runls-test-check (equal (project-root (project-current)) runls-test-run) "episode-3's project root %s" (project-root (project-current)))
  (runls-test-check (eglot-managed-p) "episode-3/alice/alice.log is not managed"))

(ignore-errors (eglot-shutdown (eglot-current-server)))
(message "%d passed, %d failed" runls-test-passed runls-test-failed)
(kill-emacs (if (= runls-test-failed 0) 0 1))
;;; runls-test.el ends here
