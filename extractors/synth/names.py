"""Made-up values from small built-in word lists: companies, people, addresses, tax and bank ids,
item descriptions, document numbers. Every function draws only from the `random.Random` it is given.
"""
from __future__ import annotations

import random
import string
from dataclasses import dataclass

__all__ = ["Party", "COUNTRIES", "company_name", "person_name", "address_lines", "vat_id", "phone",
           "make_party", "iban", "bic", "bank_name", "item_description", "receipt_item", "IdPattern",
           "make_id_pattern", "slug"]

COUNTRIES = {"en": ["US", "GB", "IE", "AU", "CA"], "de": ["DE", "DE", "AT", "CH"], "fr": ["FR", "FR", "BE", "CH"],
             "es": ["ES"], "nl": ["NL", "NL", "BE"], "ms": ["MY"]}

_SYL_A = ["Al", "Bor", "Cel", "Dan", "Ev", "Fal", "Gor", "Hel", "Ir", "Jun", "Kar", "Lum", "Mer", "Nor", "Ol", "Pra",
          "Quin", "Ros", "Sol", "Tel", "Ul", "Ver", "Wes", "Xan", "Yor", "Zen", "Bel", "Cor", "Dur", "Fen"]
_SYL_B = ["a", "e", "i", "o", "ex", "on", "ia", "en", "ar", "is", "um", "or", "ix", "ra", "ta", "lo", "no", "va"]
_SYL_C = ["", "", "tech", "tron", "vis", "dale", "stein", "berg", "ford", "ton", "mark", "line", "sys", "med", "tex",
          "lux", "form", "nova"]

_SURNAMES = {
    "en": ["Smith", "Johnson", "Taylor", "Brown", "Walker", "Wright", "Harris", "Clarke", "Lewis", "Turner", "Baker",
           "Hill", "Cooper", "Ward", "Morgan", "Reed", "Fletcher", "Hayes", "Porter", "Shaw"],
    "de": ["Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Hoffmann", "Schulz",
           "Koch", "Richter", "Wolf", "Schröder", "Neumann", "Braun", "Zimmermann", "Krüger", "Hartmann", "Lange"],
    "fr": ["Martin", "Bernard", "Dubois", "Thomas", "Robert", "Richard", "Petit", "Durand", "Leroy", "Moreau", "Simon",
           "Laurent", "Lefèvre", "Michel", "Garnier", "Faure", "Rousseau", "Blanc", "Fontaine", "Chevalier"],
    "es": ["García", "Fernández", "González", "Rodríguez", "López", "Martínez", "Sánchez", "Pérez", "Gómez", "Martín",
           "Jiménez", "Ruiz", "Hernández", "Díaz", "Moreno", "Álvarez", "Romero", "Navarro", "Torres", "Domínguez"],
    "nl": ["de Jong", "Jansen", "de Vries", "van den Berg", "van Dijk", "Bakker", "Janssen", "Visser", "Smit",
           "Meijer", "de Boer", "Mulder", "de Groot", "Bos", "Vos", "Peters", "Hendriks", "van Leeuwen", "Dekker"],
    "ms": ["TAN", "LIM", "LEE", "WONG", "NG", "CHONG", "ONG", "TEO", "ABDULLAH", "ISMAIL", "RAHMAN", "HASSAN", "KUMAR",
           "CHAN", "YAP", "GOH"],
}
_FIRST = {
    "en": ["James", "Emma", "Oliver", "Sophie", "Daniel", "Laura", "Michael", "Grace", "Thomas", "Anna", "Peter", "Kate"],
    "de": ["Hans", "Anna", "Stefan", "Julia", "Thomas", "Katrin", "Jürgen", "Monika", "Lukas", "Sabine", "Klaus", "Lea"],
    "fr": ["Jean", "Marie", "Pierre", "Sophie", "Luc", "Claire", "Hélène", "Nicolas", "Camille", "Julien", "Élodie"],
    "es": ["José", "María", "Carlos", "Lucía", "Javier", "Carmen", "Pablo", "Elena", "Antonio", "Sofía", "Raúl"],
    "nl": ["Jan", "Sanne", "Pieter", "Femke", "Daan", "Lotte", "Bram", "Eva", "Joris", "Anouk", "Ruud", "Inge"],
    "ms": ["AHMAD", "SITI", "MUHAMMAD", "NURUL", "WEI LING", "KAH MENG", "RAJ", "PRIYA", "AIMAN", "MEI LING"],
}
_INDUSTRY = {
    "en": ["Consulting", "Logistics", "Supplies", "Engineering", "Software", "Trading", "Foods", "Print", "Design",
           "Hardware", "Solutions", "Systems", "Industries", "Services", "Partners", "Electrical", "Interiors"],
    "de": ["Haustechnik", "Bau", "Technik", "Logistik", "Elektro", "Druck", "Beratung", "Software", "Metallbau",
           "Holzbau", "Gastro", "Medizintechnik", "Handel", "Systeme", "Werkzeuge", "Reinigung"],
    "fr": ["Transports", "Boulangerie", "Conseil", "Informatique", "Bâtiment", "Imprimerie", "Électricité",
           "Menuiserie", "Distribution", "Services", "Ingénierie", "Fournitures"],
    "es": ["Transportes", "Construcciones", "Suministros", "Consultoría", "Informática", "Distribuciones",
           "Instalaciones", "Gráficas", "Servicios", "Ingeniería", "Alimentación", "Reformas"],
    "nl": ["Installatie", "Bouw", "Transport", "Advies", "Techniek", "Drukkerij", "Groothandel", "Software",
           "Schoonmaak", "Logistiek", "Metaal", "Elektro"],
    "ms": ["TRADING", "ENTERPRISE", "HARDWARE", "RESTORAN", "BOOKSTORE", "MINI MARKET", "STATIONERY", "KEDAI RUNCIT",
           "FOOD CORNER", "BAKERY", "PHARMACY", "AUTO PARTS"],
}
_LEGAL = {
    "US": ["Inc.", "LLC", "Corp.", "Co."], "GB": ["Ltd", "Limited", "Ltd.", "PLC", "LLP"], "IE": ["Ltd", "Limited", "DAC"],
    "AU": ["Pty Ltd", "Pty. Ltd."], "CA": ["Inc.", "Ltd.", "Corp."],
    "DE": ["GmbH", "AG", "KG", "GmbH & Co. KG", "e.K.", "UG (haftungsbeschränkt)"], "AT": ["GmbH", "AG", "KG", "OG"],
    "CH": ["AG", "GmbH", "SA", "Sàrl"], "FR": ["SARL", "SAS", "SA", "EURL", "SASU"], "BE": ["SPRL", "SA", "BV", "NV", "SRL"],
    "ES": ["S.L.", "S.A.", "S.L.U.", "SL", "SA"], "NL": ["B.V.", "N.V.", "V.O.F.", "BV"],
    "MY": ["SDN BHD", "SDN. BHD.", "ENTERPRISE", "TRADING", "(M) SDN BHD", "PLT"],
}

_STREET_NAMES = {
    "en": ["Oak", "Mill", "Church", "Station", "High", "Park", "King", "Queen", "Victoria", "Market", "Bridge", "Green",
           "Elm", "Cedar", "Maple", "Lake", "Hill", "Chapel", "North", "Cherry"],
    "de": ["Haupt", "Bahnhof", "Schul", "Garten", "Berg", "Linden", "Kirch", "Wald", "Mühlen", "Goethe", "Schiller",
           "Industrie", "Post", "Markt", "Birken", "Eichen", "Feld", "Rosen", "Hafen", "Sonnen"],
    "fr": ["de la Paix", "de la République", "de la Gare", "du Moulin", "du Château", "de la Liberté", "des Lilas",
           "de la Fontaine", "Victor Hugo", "Pasteur", "Jean Jaurès", "de l'Église", "du Commerce", "du Marché",
           "de Verdun", "des Roses", "des Tilleuls", "de la Forge"],
    "es": ["Mayor", "Real", "del Sol", "de la Luna", "Colón", "de la Constitución", "de Alcalá", "de la Libertad",
           "de Castilla", "Doctor Fleming", "San Juan", "Goya", "Serrano", "del Mar", "de los Olivos", "de los Pinos",
           "Rosales", "del Arenal"],
    "nl": ["Kerk", "Molen", "Dorps", "Stations", "Heren", "Keizers", "School", "Linden", "Eiken", "Beuken", "Industrie",
           "Haven", "Markt", "Wilhelmina", "Juliana", "Oranje", "Nieuwe", "Oude", "Zuid", "Vijver"],
    "ms": ["MELATI", "SENTOSA", "INDAH", "DAMAI", "BUKIT", "MUTIARA", "CEMPAKA", "PERMAI", "SERI", "MAJU", "JAYA",
           "BAHAGIA", "SETIA", "KENANGA", "DAHLIA", "MERANTI", "PERDANA", "IMPIAN"],
}
_CITIES = {
    "DE": ["Berlin", "Hamburg", "München", "Köln", "Frankfurt am Main", "Stuttgart", "Düsseldorf", "Leipzig",
           "Dortmund", "Bremen", "Hannover", "Nürnberg", "Freiburg", "Kassel", "Augsburg"],
    "AT": ["Wien", "Graz", "Linz", "Salzburg", "Innsbruck", "Klagenfurt"],
    "CH": ["Zürich", "Bern", "Basel", "Luzern", "Genève", "Lausanne", "St. Gallen"],
    "FR": ["Paris", "Lyon", "Marseille", "Toulouse", "Nantes", "Lille", "Bordeaux", "Rennes", "Strasbourg",
           "Montpellier", "Nice", "Dijon"],
    "BE": ["Bruxelles", "Liège", "Namur", "Antwerpen", "Gent", "Brugge", "Leuven", "Charleroi"],
    "ES": ["Madrid", "Barcelona", "Valencia", "Sevilla", "Zaragoza", "Málaga", "Bilbao", "Murcia", "Alicante",
           "Valladolid", "Granada"],
    "NL": ["Amsterdam", "Rotterdam", "Utrecht", "Den Haag", "Eindhoven", "Groningen", "Tilburg", "Almere", "Breda",
           "Nijmegen", "Haarlem", "Zwolle"],
    "GB": ["London", "Manchester", "Leeds", "Bristol", "Glasgow", "Sheffield", "Leicester", "Cardiff", "Nottingham",
           "York"],
    "IE": ["Dublin", "Cork", "Galway", "Limerick", "Waterford"],
    "US": ["Springfield, IL", "Austin, TX", "Portland, OR", "Denver, CO", "Columbus, OH", "Madison, WI",
           "Raleigh, NC", "Boise, ID", "Tucson, AZ", "Albany, NY"],
    "AU": ["Sydney NSW", "Melbourne VIC", "Brisbane QLD", "Perth WA", "Adelaide SA", "Hobart TAS"],
    "CA": ["Toronto, ON", "Ottawa, ON", "Calgary, AB", "Halifax, NS", "Vancouver, BC", "Winnipeg, MB"],
    "MY": ["KUALA LUMPUR, WILAYAH PERSEKUTUAN", "JOHOR BAHRU, JOHOR", "PETALING JAYA, SELANGOR", "SHAH ALAM, SELANGOR",
           "IPOH, PERAK", "GEORGETOWN, PULAU PINANG", "SKUDAI, JOHOR", "KLANG, SELANGOR", "SEREMBAN, NEGERI SEMBILAN",
           "MELAKA, MELAKA"],
}
_COUNTRY_NAME = {
    "en": {"DE": "Germany", "AT": "Austria", "CH": "Switzerland", "FR": "France", "BE": "Belgium", "ES": "Spain",
           "NL": "Netherlands", "GB": "United Kingdom", "IE": "Ireland", "US": "USA", "AU": "Australia",
           "CA": "Canada", "MY": "Malaysia"},
    "de": {"DE": "Deutschland", "AT": "Österreich", "CH": "Schweiz", "FR": "Frankreich", "BE": "Belgien",
           "ES": "Spanien", "NL": "Niederlande", "GB": "Großbritannien", "IE": "Irland", "US": "USA"},
    "fr": {"DE": "Allemagne", "AT": "Autriche", "CH": "Suisse", "FR": "France", "BE": "Belgique", "ES": "Espagne",
           "NL": "Pays-Bas", "GB": "Royaume-Uni", "IE": "Irlande", "US": "États-Unis"},
    "es": {"DE": "Alemania", "AT": "Austria", "CH": "Suiza", "FR": "Francia", "BE": "Bélgica", "ES": "España",
           "NL": "Países Bajos", "GB": "Reino Unido", "IE": "Irlanda", "US": "EE. UU."},
    "nl": {"DE": "Duitsland", "AT": "Oostenrijk", "CH": "Zwitserland", "FR": "Frankrijk", "BE": "België",
           "ES": "Spanje", "NL": "Nederland", "GB": "Verenigd Koninkrijk", "IE": "Ierland", "US": "VS"},
}

_PRODUCTS = {
    "en": ["hex bolt", "office chair", "printer paper", "network cable", "LED panel", "safety gloves", "coffee beans",
           "toner cartridge", "desk lamp", "storage box", "USB hub", "wall bracket", "cable ties", "drill bit set",
           "monitor arm", "paint roller", "hand soap", "filing cabinet", "laptop stand", "extension lead"],
    "de": ["Sechskantschraube", "Bürostuhl", "Kopierpapier", "Netzwerkkabel", "LED-Panel", "Schutzhandschuhe",
           "Kaffeebohnen", "Tonerkartusche", "Schreibtischleuchte", "Lagerbox", "Wandhalterung", "Kabelbinder",
           "Bohrerset", "Monitorhalter", "Farbroller", "Flüssigseife", "Aktenschrank", "Verlängerungskabel",
           "Dübel", "Mineralwasser"],
    "fr": ["vis hexagonale", "chaise de bureau", "papier A4", "câble réseau", "panneau LED", "gants de protection",
           "café en grains", "cartouche de toner", "lampe de bureau", "boîte de rangement", "support mural",
           "colliers de serrage", "coffret de forets", "rouleau de peinture", "savon liquide", "armoire à dossiers",
           "rallonge électrique", "chevilles", "eau minérale", "ramette de papier"],
    "es": ["tornillo hexagonal", "silla de oficina", "papel A4", "cable de red", "panel LED", "guantes de seguridad",
           "café en grano", "cartucho de tóner", "lámpara de escritorio", "caja de almacenaje", "soporte de pared",
           "bridas", "juego de brocas", "rodillo de pintura", "jabón líquido", "archivador", "alargador eléctrico",
           "tacos", "agua mineral", "paquete de folios"],
    "nl": ["zeskantbout", "bureaustoel", "printpapier", "netwerkkabel", "LED-paneel", "werkhandschoenen",
           "koffiebonen", "tonercartridge", "bureaulamp", "opbergbox", "muurbeugel", "kabelbinders", "borenset",
           "verfroller", "handzeep", "archiefkast", "verlengsnoer", "pluggen", "mineraalwater", "laptopstandaard"],
}
_SERVICES = {
    "en": ["Consulting services", "Software licence", "Maintenance contract", "Installation", "Delivery charge",
           "Training session", "Web hosting", "Cleaning service", "Project management", "Support hours",
           "Design work", "Site survey"],
    "de": ["Beratungsleistung", "Softwarelizenz", "Wartungsvertrag", "Montagearbeiten", "Versandkosten", "Schulung",
           "Webhosting", "Unterhaltsreinigung", "Projektleitung", "Supportstunden", "Gestaltung", "Anfahrt"],
    "fr": ["Prestation de conseil", "Licence logicielle", "Contrat de maintenance", "Installation",
           "Frais de port", "Formation", "Hébergement web", "Nettoyage des locaux", "Gestion de projet",
           "Heures de support", "Travaux de graphisme", "Déplacement"],
    "es": ["Servicios de consultoría", "Licencia de software", "Contrato de mantenimiento", "Instalación",
           "Gastos de envío", "Formación", "Alojamiento web", "Servicio de limpieza", "Gestión de proyecto",
           "Horas de soporte", "Trabajos de diseño", "Desplazamiento"],
    "nl": ["Advieswerkzaamheden", "Softwarelicentie", "Onderhoudscontract", "Installatie", "Verzendkosten",
           "Training", "Webhosting", "Schoonmaakdienst", "Projectmanagement", "Supporturen", "Ontwerpwerk",
           "Voorrijkosten"],
}
_ATTRS = {
    "en": ["stainless", "black", "heavy-duty", "premium", "recycled", "ergonomic", "wireless", "industrial", "blue",
           "large", "compact", "standard", "white", "galvanised"],
    "de": ["Edelstahl", "schwarz", "Premium", "recycelt", "ergonomisch", "kabellos", "verzinkt", "weiß", "groß",
           "kompakt", "Standard", "blau"],
    "fr": ["inox", "noir", "premium", "recyclé", "ergonomique", "sans fil", "galvanisé", "blanc", "grand", "compact",
           "standard", "bleu"],
    "es": ["inoxidable", "negro", "premium", "reciclado", "ergonómico", "inalámbrico", "galvanizado", "blanco",
           "grande", "compacto", "estándar", "azul"],
    "nl": ["rvs", "zwart", "premium", "gerecycled", "ergonomisch", "draadloos", "verzinkt", "wit", "groot", "compact",
           "standaard", "blauw"],
}
_SPECS = ["M8 x 40", "500 sheets", "Cat6 5 m", "60 x 60 cm", "size L", "1 kg", "12-pack", "2.5 mm", "230 V",
          "10 pcs", "A4 80 g", "DN 50", "3 m", "XL", "1,5 l", "20 x 30 cm", "Ø 12 mm", "RAL 9010"]
_CLAUSES = {
    "en": ["incl. setup and documentation", "as per quotation {n}", "delivered to site in {city}",
           "for the period {m1} to {m2}", "according to the framework agreement", "including travel expenses"],
    "de": ["inkl. Einrichtung und Dokumentation", "gemäß Angebot {n}", "geliefert an Baustelle {city}",
           "für den Zeitraum {m1} bis {m2}", "laut Rahmenvertrag", "einschließlich Fahrtkosten"],
    "fr": ["y compris mise en service et documentation", "selon devis {n}", "livré sur le chantier de {city}",
           "pour la période du {m1} au {m2}", "selon contrat-cadre", "frais de déplacement inclus"],
    "es": ["incluye configuración y documentación", "según presupuesto {n}", "entregado en obra en {city}",
           "para el periodo {m1} a {m2}", "según contrato marco", "gastos de desplazamiento incluidos"],
    "nl": ["incl. installatie en documentatie", "volgens offerte {n}", "geleverd op locatie {city}",
           "voor de periode {m1} t/m {m2}", "conform raamovereenkomst", "inclusief reiskosten"],
}
_RECEIPT_ITEMS = {
    "en": ["NASI LEMAK", "TEH TARIK", "ICED LEMON TEA", "ROTI CANAI", "CHICKEN RICE", "MEE GORENG", "KOPI O",
           "MINERAL WATER 500ML", "A4 PAPER 80GSM", "PVC PIPE 20MM", "WOOD SCREW 1 INCH", "BATTERY AA 2PCS",
           "TISSUE BOX", "GLUE STICK", "BALL PEN BLUE", "CURRY PUFF", "FRIED NOODLES", "PAINT BRUSH 2IN",
           "MASKING TAPE", "DISH SOAP 900ML", "BREAD LOAF", "FRESH MILK 1L", "CHOCOLATE BAR", "SPONGE 3PCS"],
    "ms": ["NASI GORENG KAMPUNG", "AIR SIRAP", "TEH O AIS", "MEE REBUS", "ROTI BAKAR", "AYAM GORENG", "KUIH LAPIS",
           "AIR MINERAL", "GULA 1KG", "BERAS 5KG", "MINYAK MASAK 2KG", "SABUN BASUH", "KERTAS A4", "PEN BIRU",
           "TELUR GRED A 10BJ", "ROTI JALA"],
    "de": ["Brötchen", "Milch 1L", "Kaffee", "Butter", "Äpfel lose", "Gouda Scheiben", "Vollkornbrot", "Joghurt",
           "Bananen", "Wasser 1,5L", "Laugenbrezel", "Cappuccino", "Nudeln 500g", "Tomaten", "Orangensaft",
           "Schokolade", "Pfand", "Spülmittel"],
    "fr": ["Baguette", "Croissant", "Café crème", "Lait 1L", "Pommes", "Comté", "Eau 1,5L", "Jambon", "Yaourt nature",
           "Pain au chocolat", "Tomates", "Beurre doux", "Pâtes 500g", "Jus d'orange", "Chocolat noir", "Salade"],
    "es": ["Pan", "Café con leche", "Agua 1,5L", "Leche entera", "Manzanas", "Queso", "Jamón serrano",
           "Aceite de oliva", "Tostada", "Zumo de naranja", "Tomates", "Huevos 12u", "Croissant", "Caña",
           "Patatas bravas", "Yogur"],
    "nl": ["Brood", "Melk 1L", "Koffie", "Kaas jong belegen", "Appels", "Boter", "Water 1,5L", "Stroopwafels",
           "Hagelslag", "Bananen", "Appeltaart", "Cappuccino", "Pindakaas", "Tomaten", "Sinaasappelsap", "Drop"],
}
_BANKS = {
    "en": ["First National Bank", "Barclays", "Lloyds Bank", "HSBC", "Bank of Ireland", "Commonwealth Bank",
           "Royal Bank", "Chase"],
    "de": ["Sparkasse {city}", "Volksbank {city}", "Commerzbank", "Deutsche Bank", "Postbank", "Raiffeisenbank",
           "UBS", "Erste Bank"],
    "fr": ["Crédit Agricole", "BNP Paribas", "Société Générale", "Banque Populaire", "Crédit Mutuel", "LCL"],
    "es": ["Banco Santander", "BBVA", "CaixaBank", "Banco Sabadell", "Bankinter", "Unicaja"],
    "nl": ["ING Bank", "Rabobank", "ABN AMRO", "Triodos Bank", "SNS Bank", "KBC", "Belfius"],
}
_IBAN_LEN = {"DE": 22, "AT": 20, "CH": 21, "FR": 27, "BE": 16, "ES": 24, "NL": 18, "GB": 22, "IE": 22}


@dataclass(frozen=True, slots=True)
class Party:
    name: str
    address: tuple[str, ...]          # printed address lines, street first, town/postcode after
    country: str
    vat_id: str | None = None
    phone: str | None = None
    email: str | None = None
    web: str | None = None
    contact: str | None = None


_SLUG = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss", "é": "e", "è": "e", "ê": "e", "à": "a",
                       "á": "a", "í": "i", "ó": "o", "ú": "u", "ñ": "n", "ç": "c", "ë": "e", "ï": "i", "â": "a"})
_LANG_COUNTRY = {"en": "GB", "de": "DE", "fr": "FR", "es": "ES", "nl": "NL"}


def slug(text: str) -> str:
    s = text.lower().translate(_SLUG)
    return "".join(c for c in s if c in string.ascii_lowercase + string.digits)[:18] or "info"


def _invented(rng: random.Random) -> str:
    return rng.choice(_SYL_A) + rng.choice(_SYL_B) + rng.choice(_SYL_C)


def person_name(rng: random.Random, lang: str) -> str:
    return f"{rng.choice(_FIRST[lang])} {rng.choice(_SURNAMES[lang])}"


def without_legal_form(name: str) -> str:
    """`name` without the legal form it ends with ("Yorisstein BV" -> "Yorisstein")."""
    for legal in sorted({f for forms in _LEGAL.values() for f in forms}, key=len, reverse=True):
        if name.endswith(" " + legal) and len(name) > len(legal) + 1:
            return name[: -len(legal) - 1]
    return name


def company_name(rng: random.Random, lang: str, country: str) -> str:
    """A made-up company name with a legal form usual in `country`."""
    legal = rng.choice(_LEGAL[country])
    sur = lambda: rng.choice(_SURNAMES[lang])  # noqa: E731
    ind = rng.choice(_INDUSTRY[lang])
    if lang == "ms":
        pat = rng.randrange(4)
        base = [f"{_invented(rng).upper()} {ind}", f"{sur()} {ind}", f"KEDAI {_invented(rng).upper()}",
                f"{_invented(rng).upper()} {rng.choice(_STREET_NAMES['ms'])} {ind}"][pat]
        return f"{base} {legal}"
    pat = rng.randrange(6)
    if pat == 0:
        base = f"{sur()} {ind}"
    elif pat == 1:
        base = _invented(rng)
    elif pat == 2:
        base = f"{sur()} & {sur()}"
    elif pat == 3:
        base = f"{_invented(rng)} {ind}"
    elif pat == 4:
        base = f"{ind} {sur()}"
    else:
        base = f"{_invented(rng)}{rng.choice(['', ' ', '-'])}{rng.choice(_INDUSTRY[lang])}"
    return f"{base} {legal}"


def _postcode(rng: random.Random, country: str) -> str:
    d = lambda k: "".join(rng.choice(string.digits) for _ in range(k))  # noqa: E731
    L = lambda k: "".join(rng.choice("ABCDEFGHJKLMNPRSTUWXYZ") for _ in range(k))  # noqa: E731
    if country in ("DE", "FR", "ES", "MY", "US"):
        return str(rng.randint(10000, 99899)) if country != "ES" else f"{rng.randint(1, 52):02d}{d(3)}"
    if country in ("AT", "CH", "BE", "AU"):
        return str(rng.randint(1000, 9899))
    if country == "NL":
        return f"{rng.randint(1000, 9999)} {L(2)}"
    if country == "GB":
        return f"{L(2)}{rng.randint(1, 20)} {rng.randint(1, 9)}{L(2)}"
    if country == "IE":
        return f"D{rng.randint(1, 24):02d} {L(1)}{d(1)}{L(1)}{d(1)}"
    return f"{L(1)}{d(1)}{L(1)} {d(1)}{L(1)}{d(1)}"            # CA


def address_lines(rng: random.Random, country: str, lang: str, with_country: bool = False,
                  home: str | None = None) -> tuple[str, ...]:
    """Street line(s) then postcode/town line(s), in the order and style of `country`."""
    n = rng.randint(1, 240)
    city = rng.choice(_CITIES[country])
    pc = _postcode(rng, country)
    st_lang = lang if lang in _STREET_NAMES else "en"
    name = rng.choice(_STREET_NAMES[st_lang])
    if country == "MY":
        lines = [f"NO. {n}, JALAN {name} {rng.randint(1, 30)},", f"TAMAN {rng.choice(_STREET_NAMES['ms'])},"]
        c, _, state = city.partition(", ")
        lines.append(f"{pc} {c}, {state}.")
        return tuple(lines)
    if st_lang == "de":
        street = f"{name}{rng.choice(['straße', 'weg', 'allee', 'ring', 'platz', 'gasse', 'str.'])} {n}"
    elif st_lang == "fr":
        street = f"{n}, {rng.choice(['rue', 'avenue', 'boulevard', 'place', 'chemin', 'allée'])} {name}"
    elif st_lang == "es":
        street = f"{rng.choice(['Calle', 'Avenida', 'Plaza', 'Paseo', 'C/'])} {name}, {n}"
        if rng.random() < 0.3:
            street += f", {rng.randint(1, 8)}º {rng.choice('ABCD')}"
    elif st_lang == "nl":
        street = f"{name}{rng.choice(['straat', 'laan', 'weg', 'plein', 'gracht', 'kade', 'singel'])} {n}"
    else:
        street = f"{n} {name} {rng.choice(['Street', 'Road', 'Avenue', 'Lane', 'Drive', 'Way', 'Close', 'Place'])}"
    lines = [street]
    if rng.random() < 0.2:
        lines.append({"en": f"Suite {rng.randint(100, 900)}", "de": f"Gebäude {rng.choice('ABC')}",
                      "fr": f"Bâtiment {rng.choice('ABC')}", "es": f"Nave {rng.randint(1, 20)}",
                      "nl": f"Unit {rng.randint(1, 40)}"}[st_lang])
    if country == "GB":
        lines += [city, pc]
    elif country in ("US", "CA", "AU"):
        lines.append(f"{city} {pc}")
    elif country == "IE":
        lines.append(f"{city} {pc}")
    else:
        prefix = f"{country}-" if rng.random() < 0.15 and country in ("DE", "AT", "CH") else ""
        lines.append(f"{prefix}{pc} {city}")
    if with_country and home != country:
        lines.append(_COUNTRY_NAME.get(lang, _COUNTRY_NAME["en"]).get(country, country))
    return tuple(lines)


_VAT_PATTERNS: dict[str, list[str | int]] = {     # text as printed; int: that many random digits; "L": a letter
    "DE": ["DE", 9], "AT": ["ATU", 8], "CH": ["CHE-", 3, ".", 3, ".", 3, " MWST"], "FR": ["FR", 11],
    "BE": ["BE0", 9], "ES": ["ES", "L", 8], "NL": ["NL", 9, "B", 2], "GB": ["GB", 9], "IE": ["IE", 7, "L"],
    "US": [2, "-", 7], "AU": ["ABN ", 2, " ", 3, " ", 3, " ", 3], "CA": [9, " RT0001"], "MY": [12],
}
_PHONE_PATTERNS = {
    "DE": ["+49 ## #######", "0### / ### ## ##", "0##-######"], "AT": ["+43 # #######", "0### ######"],
    "CH": ["+41 ## ### ## ##", "0## ### ## ##"],
    "FR": ["+33 # ## ## ## ##", "0# ## ## ## ##", "0#.##.##.##.##"], "BE": ["+32 # ### ## ##", "0## ## ## ##"],
    "ES": ["+34 ### ### ###", "9## ### ###"], "NL": ["+31 ## #######", "0##-#######"],
    "GB": ["+44 ## #### ####", "0### ### ####"], "IE": ["+353 # ### ####"],
    "US": ["(###) ###-####", "###-###-####", "+1 ### ### ####"], "AU": ["+61 # #### ####", "(0#) #### ####"],
    "CA": ["(###) ###-####"], "MY": ["0#-#### ####", "0##-#######", "+60 #-#### ####"],
}


def _digits(rng: random.Random, k: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(k))


def vat_id(rng: random.Random, country: str) -> str:
    """A VAT / tax id in the shape `country` prints it (digits random, no check digits)."""
    out = []
    for part in _VAT_PATTERNS[country]:
        if isinstance(part, int):
            out.append(_digits(rng, part))
        elif part == "L":
            out.append(rng.choice("ABCDEFGHW"))
        else:
            out.append(part)
    return "".join(out)


def phone(rng: random.Random, country: str) -> str:
    """A phone number in one of `country`'s usual spellings ('#' in the pattern: a random digit)."""
    return "".join(rng.choice(string.digits) if c == "#" else c for c in rng.choice(_PHONE_PATTERNS[country]))


def make_party(rng: random.Random, lang: str, country: str, *, vat: bool = True, with_country: bool = False,
               home: str | None = None) -> Party:
    name = company_name(rng, lang, country)
    s = slug(name.split(" ")[0] + name.split(" ")[1] if " " in name else name)
    tld = {"US": "com", "GB": "co.uk", "IE": "ie", "AU": "com.au", "CA": "ca", "MY": "com.my"}.get(country,
                                                                                             country.lower())
    return Party(name=name, address=address_lines(rng, country, lang, with_country, home), country=country,
                 vat_id=vat_id(rng, country) if vat else None, phone=phone(rng, country),
                 email=f"{rng.choice(['info', 'billing', 'invoices', 'contact', 'office', 'accounts'])}@{s}.{tld}",
                 web=f"www.{s}.{tld}", contact=person_name(rng, lang if lang in _FIRST else "en"))


def iban(rng: random.Random, country: str) -> str:
    """A grouped IBAN with valid mod-97 check digits."""
    cc = country if country in _IBAN_LEN else "DE"
    bban = "".join(rng.choice(string.digits) for _ in range(_IBAN_LEN[cc] - 4))
    if cc == "GB" or cc == "IE":
        bban = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(4)) + bban[4:]
    num = "".join(str(int(c, 36)) for c in bban + cc + "00")
    check = 98 - int(num) % 97
    raw = f"{cc}{check:02d}{bban}"
    return " ".join(raw[i:i + 4] for i in range(0, len(raw), 4))


def bic(rng: random.Random, country: str) -> str:
    letters = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(4))
    return f"{letters}{country}{rng.choice(['2X', 'MM', 'FF', '33', '22'])}{rng.choice(['', 'XXX'])}"


def bank_name(rng: random.Random, lang: str, city: str) -> str:
    return rng.choice(_BANKS[lang]).format(city=city)


def item_description(rng: random.Random, lang: str, long: bool, service: bool) -> str:
    """A line-item description; `long` adds a clause so that it wraps in a narrow column."""
    if service:
        text = rng.choice(_SERVICES[lang])
    else:
        prod = rng.choice(_PRODUCTS[lang])
        attr = rng.choice(_ATTRS[lang])
        text = {"en": f"{attr.capitalize()} {prod}", "de": f"{prod} {attr}", "fr": f"{prod.capitalize()} {attr}",
                "es": f"{prod.capitalize()} {attr}", "nl": f"{attr.capitalize()} {prod}"}[lang]
        if rng.random() < 0.5:
            text += " " + rng.choice(_SPECS)
    if long:
        clause = rng.choice(_CLAUSES[lang])
        text += ", " + clause.format(n=f"{rng.randint(1000, 99999)}", city=rng.choice(_CITIES[_LANG_COUNTRY[lang]]),
                                     m1=f"{rng.randint(1, 12):02d}/{rng.randint(2019, 2025)}",
                                     m2=f"{rng.randint(1, 12):02d}/{rng.randint(2019, 2025)}")
    return text


def receipt_item(rng: random.Random, lang: str) -> str:
    return rng.choice(_RECEIPT_ITEMS[lang])


@dataclass(frozen=True, slots=True)
class IdPattern:
    """How one format numbers its documents: prefix, separator, year part, digit count."""
    prefix: str
    sep: str
    year: str            # "" | "yyyy" | "yy"
    digits: int

    def render(self, rng: random.Random, year: int) -> str:
        num = str(rng.randint(10 ** (self.digits - 1), 10 ** self.digits - 1))
        parts = [p for p in (self.prefix, {"yyyy": f"{year}", "yy": f"{year % 100:02d}", "": ""}[self.year], num) if p]
        return self.sep.join(parts)


def make_id_pattern(rng: random.Random, prefixes: list[str]) -> IdPattern:
    prefix = rng.choice(prefixes + [""])
    sep = rng.choice(["-", "/", "", "-"]) if prefix or rng.random() < 0.5 else "-"
    year = rng.choice(["", "yyyy", "yy", ""])
    if not prefix and not year:
        sep = ""
    return IdPattern(prefix, sep, year, rng.randint(3, 8))
