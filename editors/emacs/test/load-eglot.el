;;; load-eglot.el --- Eglot in a bare Emacs (emacs -Q)  -*- lexical-binding: t; -*-

;; Emacs 29 and later have Eglot built in. On Emacs 28, Debian's elpa-eglot
;; puts it (with the project and xref it needs) in the system's package
;; folder, which emacs -Q does not look in: activate the packages there,
;; with a scratch folder of user packages, so nothing of the user's is read.

;;; Code:

(require 'package)
(unless (require 'eglot nil t)
  (setq package-user-dir (make-temp-file "runls-elpa" t)
        package-directory-list (list "/usr/share/emacs/site-lisp/elpa"))
  (package-initialize)
  (require 'eglot))
;;; load-eglot.el ends here
