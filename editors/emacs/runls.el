;;; runls.el --- runls for Emacs: agent runs as an Eglot workspace  -*- lexical-binding: t; -*-

;; Version: 0.1
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, languages
;; URL: the runls repository, editors/emacs/

;;; Commentary:

;; runls (a language server for AI-agent run folders) through Eglot,
;; built into Emacs 29 and later, and the `eglot' package on Emacs 28.
;; This file makes the three settings Eglot needs to serve a run:
;;
;; - a major mode for the record files of a run, `runls-log-mode', for
;;   `.log' and `.history' files inside a run (a path with
;;   episode-N/AGENT/ in it), with the record's fields highlighted;
;; - the server program: `runls serve' (`runls-program' names the binary);
;; - the run folder as the project root: `runls-project-find' makes the
;;   folder that holds the episode-N folders the project of every file
;;   below it, so that Eglot's rootUri is the run folder and not the git
;;   root or the file's own folder.
;;
;; Then M-x eglot in a record file (or `eglot-ensure' from
;; `runls-log-mode-hook') starts runls; diagnostics come through Flymake,
;; the records of a file through imenu, their facts through eldoc (hover),
;; and workspace symbols through xref (M-x xref-find-apropos).

;;; Code:

(require 'eglot)
(require 'project)
(require 'cl-lib)

(defgroup runls nil
  "runls, the language server of agent runs."
  :group 'tools
  :prefix "runls-")

(defcustom runls-program "runls"
  "The runls binary: a name on `exec-path' or an absolute file name."
  :type 'string)

(defcustom runls-initialization-options nil
  "The runls settings sent at initialize (spec §9), as a plist.
For example (:episode \"episode-2\" :conversation \"conv-1\"). nil: the
server's defaults."
  :type '(plist))

(defconst runls--episode-regexp "\\`episode-[0-9]+\\'"
  "An episode folder's name.")

(defconst runls--record-file-regexp
  "/episode-[0-9]+/[^/]+/\\(?:.*/\\)?[^/]+\\.\\(?:log\\|history\\)\\'"
  "A record file of an agent of a run: episode-N/AGENT/.../NAME.log or .history.")

(defvar runls-log-font-lock-keywords
  `((,(concat "^\\([0-9]\\{4\\}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]\\(?:[,.][0-9]\\{3\\}\\)?\\)"
              " \\(?:\\(ERROR\\)\\|\\(WARN\\) \\|\\(INFO\\|DEBUG\\|TRACE\\)\\)?"
              " *\\(\\[[^]\n]*\\]\\)\\(?: \\(\\[[^]\n]*\\]\\)\\)?")
     (1 font-lock-comment-face)
     (2 font-lock-warning-face nil t)
     (3 font-lock-type-face nil t)
     (4 font-lock-doc-face nil t)
     (5 font-lock-keyword-face)
     (6 font-lock-constant-face nil t)))
  "Highlighting of a record's fields: time, level, episode state, conversation.")

;;;###autoload
(define-derived-mode runls-log-mode text-mode "runls-log"
  "Major mode for the record files (.log, .history) of an agent run.
Read-only by default: the agents write these files, Emacs reads them."
  (setq-local font-lock-defaults '(runls-log-font-lock-keywords t))
  (setq-local truncate-lines t)
  (setq-local buffer-read-only t))

;;;###autoload
(add-to-list 'auto-mode-alist (cons runls--record-file-regexp 'runls-log-mode))

(defun runls-run-folder (dir)
  "The run folder that DIR is in or is, or nil.
The nearest folder at or above DIR that holds an episode-N folder."
  (locate-dominating-file
   dir (lambda (d)
         (and (file-directory-p d)
              (cl-some (lambda (f) (file-directory-p (expand-file-name f d)))
                       (directory-files d nil runls--episode-regexp t))))))

;;;###autoload
(defun runls-project-find (dir)
  "A project.el backend: the run folder DIR is in, as (runls . ROOT)."
  (when-let ((root (runls-run-folder dir)))
    (cons 'runls (file-name-as-directory (expand-file-name root)))))

(cl-defmethod project-root ((project (head runls)))
  "The run folder of a runls PROJECT."
  (cdr project))

;;;###autoload
(add-hook 'project-find-functions #'runls-project-find)

(defun runls--contact (&optional _interactive)
  "The command that starts runls, with the settings."
  (append (list runls-program "serve")
          (when runls-initialization-options
            (list :initializationOptions (list :runls runls-initialization-options)))))

;;;###autoload
(add-to-list 'eglot-server-programs (cons 'runls-log-mode #'runls--contact))

(provide 'runls)
;;; runls.el ends here
