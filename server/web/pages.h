// The fleet page's routes: the page itself at "/", "/hosts/ID" and
// "/what-if" (one document; its script shows the view the path names) and
// its files under "/static/". They hold no fleet data, so they need no
// token: the page asks for it and sends it with each /api/v1 request.
// Responses carry a Content-Security-Policy that allows only this server's
// own scripts, styles and API (no inline script, no other origin).
#ifndef TRACEHEALTH_SERVER_WEB_PAGES_H_
#define TRACEHEALTH_SERVER_WEB_PAGES_H_

#include "server/http/router.h"

namespace tracehealth::server {

void AddPageRoutes(Router* router);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_WEB_PAGES_H_
